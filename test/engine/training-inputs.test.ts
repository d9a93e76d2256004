import { describe, expect, test } from "bun:test";
import { withoutConstantPrice } from "../../src/engine/train";

describe("catalogue metadata before training", () => {
  test("a price every product shares is dropped; the other fields stay", () => {
    const out = withoutConstantPrice([
      { name: "a", price: 1, categoryPath: "x" },
      { name: "b", price: 1 },
      undefined,
      { name: "c" },
    ]);
    expect(out).toEqual([{ name: "a", categoryPath: "x" }, { name: "b" }, undefined, { name: "c" }]);
  });

  test("prices that differ, or a single priced product, are kept as given", () => {
    const varied = [{ price: 1 }, { price: 2 }];
    expect(withoutConstantPrice(varied)).toBe(varied);
    const single = [{ price: 3 }, { name: "n" }];
    expect(withoutConstantPrice(single)).toBe(single);
    expect(withoutConstantPrice(undefined)).toBeUndefined();
  });
});
