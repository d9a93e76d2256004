/**
 * Filter evaluation has a cost bound, and `contains` reads attribute values lower-cased once per loaded
 * catalogue instead of lower-casing them again for every condition of every request (issue 18, item 2).
 */
import { describe, expect, test } from "bun:test";
import { compileFilters } from "../../src/modules/recommendations/ranking/filters";
import type { FilterGroup } from "../../src/modules/recommendations/schemas";
import { buildItemTable, type ItemRow } from "../../src/modules/recommendations/serving/item-table";
import { AppError } from "../../src/shared/errors";

const row = (i: number, attributes: Record<string, unknown>): ItemRow => ({
  externalId: `p${i}`,
  name: `Product ${i}`,
  price: 10 + i,
  category: "books",
  brand: null,
  inStock: true,
  attributes,
  popularity: 0,
  rating: null,
});

async function catalogue(rows: ItemRow[]) {
  const table = buildItemTable(rows);
  return { table, attributes: await table.attributes() };
}

describe("attribute filters", () => {
  test("contains matches whatever the letter case, on strings and arrays of strings", async () => {
    const { table, attributes } = await catalogue([
      row(0, { material: "Solid OAK", tags: ["Gift", "Sale"] }),
      row(1, { material: "pine", tags: ["new"] }),
    ]);
    const group: FilterGroup = { filters: [{ field: "attributes.material", op: "contains", value: "oak" }] };
    const oak = compileFilters(group, table, attributes)!;
    expect([oak(0), oak(1)]).toEqual([true, false]);
    const tagged = compileFilters(
      { filters: [{ field: "attributes.tags", op: "contains", value: "GIFT" }] },
      table,
      attributes,
    )!;
    expect([tagged(0), tagged(1)]).toEqual([true, false]);
  });

  test("the catalogue's attribute values are not lower-cased again per condition or per request", async () => {
    const { table, attributes } = await catalogue([row(0, { material: "Solid OAK" })]);
    const group: FilterGroup = {
      logic: "or",
      filters: Array.from({ length: 50 }, () => ({
        field: "attributes.material",
        op: "contains",
        value: "x",
      })),
    };
    const original = String.prototype.toLowerCase;
    let calls = 0;
    String.prototype.toLowerCase = function (this: string) {
      calls++;
      return original.call(this);
    };
    try {
      for (let request = 0; request < 20; request++) compileFilters(group, table, attributes)!(0);
    } finally {
      String.prototype.toLowerCase = original;
    }
    // Once for the catalogue's value, once per condition's needle: not 50 conditions × 20 requests more.
    expect(calls).toBeLessThanOrEqual(1 + 50 * 20);
  });

  test("filters past the work budget answer 422 naming the filters, instead of holding the process", async () => {
    const long = "y".repeat(16_000);
    const { table, attributes } = await catalogue(
      Array.from({ length: 200 }, (_, i) => row(i, { text: long })),
    );
    const group: FilterGroup = {
      logic: "or",
      filters: Array.from({ length: 50 }, (_, k) => ({
        field: "attributes.text",
        op: "contains",
        value: `z${k}`,
      })),
    };
    const predicate = compileFilters(group, table, attributes)!;
    let refusal: unknown;
    try {
      for (let i = 0; i < table.size; i++) predicate(i);
    } catch (error) {
      refusal = error;
    }
    expect(refusal).toBeInstanceOf(AppError);
    expect((refusal as AppError).code).toBe("VALIDATION_ERROR");
    expect((refusal as AppError).detail?.[0]?.loc).toEqual(["body", "filters"]);
  });
});

describe("category and brand filters over the table's interned values", () => {
  const product = (i: number, category: string, brand: string | null): ItemRow => ({
    ...row(i, {}),
    category,
    brand,
  });

  test("match sub-categories, brands whatever the case, and items without a brand only under ne/nin", async () => {
    const { table, attributes } = await catalogue([
      product(0, "books/poetry", "Penguin"),
      product(1, "books", null),
      product(2, "garden/tools", "penguin"),
      product(3, "bookshelves", "Ikea"),
    ]);
    const run = (filters: FilterGroup["filters"]) => {
      const predicate = compileFilters({ filters }, table, attributes)!;
      return [0, 1, 2, 3].filter((i) => predicate(i));
    };
    expect(run([{ field: "category", op: "eq", value: "books" }])).toEqual([0, 1]);
    expect(run([{ field: "category", op: "ne", value: "books" }])).toEqual([2, 3]);
    expect(run([{ field: "category", op: "in", value: ["garden", "bookshelves"] }])).toEqual([2, 3]);
    expect(run([{ field: "brand", op: "eq", value: "PENGUIN" }])).toEqual([0, 2]);
    expect(run([{ field: "brand", op: "nin", value: ["penguin"] }])).toEqual([1, 3]);
    expect(run([{ field: "brand", op: "contains", value: "ke" }])).toEqual([3]);
  });

  test("a catalogue edit written into the table (its revision moves) is seen by the next filter", async () => {
    const { table, attributes } = await catalogue([product(0, "books", "a"), product(1, "garden", "b")]);
    let revision = 0;
    const edited = { ...table, revision: () => revision };
    const inGarden = () =>
      compileFilters({ filters: [{ field: "category", op: "eq", value: "garden" }] }, edited, attributes)!;
    expect([inGarden()(0), inGarden()(1)]).toEqual([false, true]);
    (edited.categories as string[])[0] = "garden/tools";
    revision++;
    expect([inGarden()(0), inGarden()(1)]).toEqual([true, true]);
  });
});
