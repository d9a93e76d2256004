import { describe, expect, test } from "bun:test";
import { attached } from "../../src/shared/attached";

describe("attached values", () => {
  test("a value set on an object is read back from it, and from no other object", () => {
    const memo = attached<object, number>("memo");
    const a = { id: 1 };
    const b = { id: 1 };
    expect(memo.get(a)).toBeUndefined();
    memo.set(a, 7);
    memo.set(a, 8);
    expect(memo.get(a)).toBe(8);
    expect(memo.get(b)).toBeUndefined();
  });

  test("two attachments with the same description do not see each other's values", () => {
    const one = attached<object, string>("same");
    const two = attached<object, string>("same");
    const owner = {};
    one.set(owner, "one");
    expect(two.get(owner)).toBeUndefined();
  });

  test("a copy made by spreading does not carry the value, and JSON and key listings never show it", () => {
    const memo = attached<{ events: number[] }, string>("memo");
    const history = { events: [1, 2] };
    memo.set(history, "computed for these events");
    const changed = { ...history, events: [3, ...history.events] };
    expect(memo.get(changed)).toBeUndefined();
    expect(JSON.stringify(history)).toBe('{"events":[1,2]}');
    expect(Object.keys(history)).toEqual(["events"]);
    const list = ["p1", "p2"];
    attached<readonly string[], string>("list JSON").set(list, '["p1","p2"]');
    expect(JSON.stringify(list)).toBe('["p1","p2"]');
    expect([...list]).toEqual(["p1", "p2"]);
  });
});
