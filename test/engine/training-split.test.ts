import { describe, expect, test } from "bun:test";
import { trainingSplit, trainModel } from "../../src/engine/train";
import type { Interactions } from "../../src/engine/types";
import { selectEvents } from "../../src/engine/weighting";
import { smallSynthetic } from "./helpers";

/** The same events in reverse order, users and items renumbered backwards: another load of the same data. */
function reloaded(events: Interactions): Interactions {
  const n = events.user.length;
  const reversed = selectEvents(
    events,
    Int32Array.from({ length: n }, (_, i) => n - 1 - i),
  );
  return {
    ...reversed,
    user: reversed.user.map((u) => events.nUsers - 1 - u),
    item: reversed.item.map((i) => events.nItems - 1 - i),
  };
}

describe("training's hold-out", () => {
  const { events } = smallSynthetic(8_000);
  const keys = {
    users: Array.from({ length: events.nUsers }, (_, u) => `user-${u}`),
    items: Array.from({ length: events.nItems }, (_, i) => `item-${i}`),
  };
  const again = reloaded(events);
  const againKeys = { users: [...keys.users].reverse(), items: [...keys.items].reverse() };
  const heldOut = (e: Interactions, k: typeof keys, idx: Int32Array) =>
    new Set(Array.from(idx, (j) => `${k.users[e.user[j]!]}|${k.items[e.item[j]!]}`));

  test("holds out the same (user, product) pairs whatever order the rows were read in and indexed by", () => {
    const a = trainingSplit(events, { splitKeys: keys }, 42);
    const b = trainingSplit(again, { splitKeys: againKeys }, 42);
    expect(a.testIdx.length).toBeGreaterThan(0.1 * events.user.length);
    expect(heldOut(again, againKeys, b.testIdx)).toEqual(heldOut(events, keys, a.testIdx));
    expect(heldOut(again, againKeys, b.trainIdx)).toEqual(heldOut(events, keys, a.trainIdx));
    // Another seed is another split.
    const c = trainingSplit(events, { splitKeys: keys }, 7);
    expect(heldOut(events, keys, c.testIdx)).not.toEqual(heldOut(events, keys, a.testIdx));
  });

  test("a job measures the same figures on the same events read in another order", () => {
    const n = events.user.length;
    const reversed = selectEvents(
      events,
      Int32Array.from({ length: n }, (_, i) => n - 1 - i),
    );
    const options = { search: false, splitKeys: keys, contentDims: 0 };
    const a = trainModel({ events }, options).metrics;
    const b = trainModel({ events: reversed }, options).metrics;
    expect(a.evaluatedUsers).toBe(b.evaluatedUsers);
    expect(a.ndcgAt10).not.toBeNull();
    expect(b.ndcgAt10!).toBeCloseTo(a.ndcgAt10!, 6);
    expect(b.popularityNdcgAt10!).toBeCloseTo(a.popularityNdcgAt10!, 6);
  });
});
