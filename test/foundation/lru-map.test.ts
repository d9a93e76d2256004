import { describe, expect, test } from "bun:test";
import { LruMap } from "../../src/shared/lru-map";

const keys = <K, V>(map: LruMap<K, V>) => [...map.entries()].map(([k]) => k);

describe("LruMap", () => {
  test("keeps use order: get and set make an entry the newest, peek does not", () => {
    const map = new LruMap<string, number>();
    map.set("a", 1);
    map.set("b", 2);
    map.set("c", 3);
    expect(keys(map)).toEqual(["a", "b", "c"]);
    expect(map.get("a")).toBe(1);
    expect(keys(map)).toEqual(["b", "c", "a"]);
    expect(map.peek("b")).toBe(2);
    expect(keys(map)).toEqual(["b", "c", "a"]);
    map.set("b", 20);
    expect(keys(map)).toEqual(["c", "a", "b"]);
    expect(map.oldest()).toEqual(["c", 3]);
    expect(map.get("missing")).toBeUndefined();
    expect(map.size).toBe(3);
  });

  test("deletes from the middle and both ends, while iterating too, and clears", () => {
    const map = new LruMap<number, string>();
    for (let i = 0; i < 6; i++) map.set(i, `v${i}`);
    expect(map.delete(0)).toBe(true);
    expect(map.delete(5)).toBe(true);
    expect(map.delete(2)).toBe(true);
    expect(map.delete(2)).toBe(false);
    expect(keys(map)).toEqual([1, 3, 4]);
    for (const [k] of map.entries()) if (k !== 3) map.delete(k);
    expect(keys(map)).toEqual([3]);
    expect(map.oldest()).toEqual([3, "v3"]);
    map.clear();
    expect(map.size).toBe(0);
    expect(map.oldest()).toBeUndefined();
    map.set(9, "again");
    expect(keys(map)).toEqual([9]);
  });

  test("evicting the oldest under churn keeps the newest entries", () => {
    const map = new LruMap<number, number>();
    for (let i = 0; i < 10_000; i++) {
      map.set(i, i);
      if (i % 3 === 0) map.get(i - 1);
      if (map.size > 100) map.delete(map.oldest()![0]);
    }
    expect(map.size).toBe(100);
    expect(keys(map)).toContain(9999);
    expect(keys(map).every((k) => k >= 9800)).toBe(true);
  });
});
