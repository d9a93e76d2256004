/**
 * The items a filter leaves are computed once per catalogue revision and kept: on a 100k-item catalogue every
 * one of 100 category filters stays cached (each is a short list, not a mask of the whole table), so a random
 * category filter does not scan the table again. A broad filter is kept as a mask, and both give the same
 * items. The cache is bounded by bytes, keys included, so filters that match nothing cannot grow it. A price cap
 * over a broad base is counted from the base's prices sorted once, as a pass over the table counts it.
 */
import { describe, expect, test } from "bun:test";
import { compileFilters } from "../../src/modules/recommendations/ranking/filters";
import { buildItemTable, type ItemRow } from "../../src/modules/recommendations/serving/item-table";
import { baseEligibility, countAtMost } from "../../src/modules/recommendations/serving/serving-cache";

const ITEMS = 100_000;
const CATEGORIES = 100;
const LIST_MAX = 5_000;

const row = (i: number): ItemRow => ({
  externalId: `p${i}`,
  name: `Product ${i}`,
  price: 10 + (i % 50),
  category: `c${i % CATEGORIES}`,
  brand: null,
  inStock: i % 3 !== 0,
  attributes: {},
  popularity: 0,
  rating: null,
});

describe("filter eligibility cache", () => {
  const table = buildItemTable(Array.from({ length: ITEMS }, (_, i) => row(i)));
  const categoryFilter = (c: number) => {
    const group = { filters: [{ field: "category", op: "eq" as const, value: `c${c}` }] };
    return { predicate: compileFilters(group, table, [])!, key: JSON.stringify(group) };
  };

  test("every category filter of a 100k-item catalogue stays cached, as the list of its items", () => {
    const first = Array.from({ length: CATEGORIES }, (_, c) => {
      const { predicate, key } = categoryFilter(c);
      return baseEligibility(table, false, predicate, key, LIST_MAX);
    });
    for (let c = 0; c < CATEGORIES; c++) {
      const { predicate, key } = categoryFilter(c);
      const again = baseEligibility(table, false, predicate, key, LIST_MAX);
      expect(again).toBe(first[c]!);
      expect(again.mask).toBeNull();
      expect(again.count).toBe(ITEMS / CATEGORIES);
      expect([...again.list!].every((i) => i % CATEGORIES === c)).toBe(true);
    }
  });

  test("a broad filter is kept as a mask, and the stock rule applies either way", () => {
    const broad = baseEligibility(table, true, null, null, LIST_MAX);
    expect(broad.list).toBeNull();
    expect(broad.count).toBe(ITEMS - Math.ceil(ITEMS / 3));
    expect(broad.mask![0]).toBe(0);
    expect(broad.mask![1]).toBe(1);
    const { predicate, key } = categoryFilter(7);
    const inStock = baseEligibility(table, true, predicate, key, LIST_MAX);
    expect(inStock.list).not.toBeNull();
    expect([...inStock.list!]).toEqual(
      Array.from({ length: ITEMS }, (_, i) => i).filter((i) => i % CATEGORIES === 7 && i % 3 !== 0),
    );
  });

  test("a filter matching more than the list's limit becomes a mask of the same items", () => {
    const { predicate, key } = categoryFilter(3);
    const listed = baseEligibility(table, false, predicate, key, LIST_MAX);
    const masked = baseEligibility(table, false, predicate, key, 10);
    expect(masked.list).toBeNull();
    expect(masked.count).toBe(listed.count);
    const fromMask = Array.from({ length: ITEMS }, (_, i) => i).filter((i) => masked.mask![i] === 1);
    expect(fromMask).toEqual([...listed.list!]);
  });

  test("filters matching nothing, each asked once, keep the cache within its budget", () => {
    const small = buildItemTable(Array.from({ length: 1_000 }, (_, i) => row(i)));
    const ask = (value: string) => {
      const group = { filters: [{ field: "category", op: "eq" as const, value }] };
      return baseEligibility(
        small,
        false,
        compileFilters(group, small, [])!,
        JSON.stringify(group),
        LIST_MAX,
      );
    };
    expect(ask("nothing-0").count).toBe(0);
    for (let k = 1; k < 60_000; k++) ask(`nothing-${k}-${"x".repeat(40)}`);
    // 4 MB of filter results, plus the table's own derived codes.
    expect(small.derived.bytes()).toBeLessThan(5 * 2 ** 20);
    expect(small.derived.bytes()).toBeGreaterThan(3 * 2 ** 20);
  });

  test("items at most a price, counted from the sorted prices, as a pass over the table counts them", () => {
    const base = baseEligibility(table, true, null, null, LIST_MAX);
    if (base.mask === null) throw new Error("expected a mask");
    for (const cap of [-1, 0, 10, 10.5, 25, 33.999, 59, 59.5, 1e9]) {
      let expected = 0;
      for (let i = 0; i < ITEMS; i++) if (base.mask[i] === 1 && table.prices[i]! <= cap) expected++;
      expect(countAtMost(table, base, cap)).toBe(expected);
    }
    expect(countAtMost(table, base, 1e9)).toBe(base.count);
  });
});
