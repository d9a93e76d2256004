import { describe, expect, test } from "bun:test";
import { denseHistory } from "../../src/engine/ranking/components";
import { DEFAULT_WEIGHTS, type WeightConfig } from "../../src/engine/weighting";

const HOUR = 3_600_000;
/** No decay: each weight is the table's own. */
const FLAT: WeightConfig = { ...DEFAULT_WEIGHTS, halfLifeDays: 0 };

function table(ids: string[], at: (i: number) => number = (i) => i) {
  return { indexOf: new Map(ids.map((id, i) => [id, at(i)])) };
}

function event(externalProductId: string, type: string, hoursAgo: number, value = 1) {
  return { externalProductId, type, value, occurredAt: Date.UTC(2026, 0, 1) - hoursAgo * HOUR };
}

describe("denseHistory", () => {
  test("one entry per product, newest first, its weights summed and its strongest type kept; older products follow at the weakest positive weight", () => {
    const t = table(["a", "b", "c", "d", "e"]);
    const dense = denseHistory(
      t,
      {
        events: [
          event("b", "VIEW", 0),
          event("a", "PURCHASE", 1),
          event("b", "CART", 2),
          event("unknown", "VIEW", 3),
          event("c", "DISLIKE", 4),
        ],
        interacted: ["a", "b", "c", "d", "e", "gone"],
      },
      FLAT,
    );
    expect([...dense.items]).toEqual([1, 0, 2, 3, 4]);
    const w = FLAT;
    expect([...dense.weights]).toEqual(
      [w.view + w.cart, w.purchase, w.dislike, w.view + w.cart, w.view + w.cart].map(Math.fround),
    );
    // The weakest positive entry is b's (VIEW + CART) when it weighs less than a purchase.
    expect(w.view + w.cart).toBeLessThan(w.purchase);
    expect(dense.types).toEqual(["CART", "PURCHASE", "DISLIKE", "VIEW", "VIEW"]);
  });

  test("histories made one after another, over tables of any size, never see each other's products", () => {
    const small = table(["a", "b"]);
    // Indices beyond the map's size (a table whose ids do not cover every row).
    const sparse = table(["x", "y"], (i) => 5_000 + i);
    const h = { events: [event("a", "VIEW", 0), event("b", "VIEW", 1)], interacted: ["a", "b"] };
    const first = denseHistory(small, h, FLAT);
    expect([...denseHistory(small, h, FLAT).items]).toEqual([...first.items]);
    const far = denseHistory(
      sparse,
      { events: [event("y", "VIEW", 0), event("y", "CART", 1)], interacted: ["x", "y"] },
      FLAT,
    );
    expect([...far.items]).toEqual([5_001, 5_000]);
    expect(far.weights[0]).toBe(Math.fround(FLAT.view + FLAT.cart));
    expect([...denseHistory(small, h, FLAT).items]).toEqual([0, 1]);
    expect(denseHistory(small, { events: [], interacted: [] }, FLAT).items.length).toBe(0);
  });

  test("weights decay with age from the user's newest event", () => {
    const config: WeightConfig = { ...DEFAULT_WEIGHTS, halfLifeDays: 1 };
    const dense = denseHistory(
      table(["a", "b"]),
      {
        events: [event("a", "VIEW", 0), event("b", "VIEW", 24)],
        interacted: ["a", "b"],
      },
      config,
    );
    expect(dense.weights[1]).toBeCloseTo(dense.weights[0]! / 2, 6);
  });
});
