import { describe, expect, test } from "bun:test";
import { createRng } from "../../src/engine/rng";
import { withInteractions } from "../../src/modules/recommendations/serving/history-cache";
import { HISTORY_LENGTH, type UserHistory } from "../../src/modules/recommendations/serving/user-history";

const T0 = Date.UTC(2026, 0, 1);

/** The history as a read of the store returns it: every event sorted newest first (stably), then cut. */
function asRead(
  history: UserHistory,
  added: { externalProductId: string; occurredAt: number }[],
): UserHistory {
  const fresh = added.map((e) => ({
    externalProductId: e.externalProductId,
    type: "VIEW",
    value: 1,
    occurredAt: e.occurredAt,
  }));
  const events = [...fresh.reverse(), ...history.events].sort((a, b) => b.occurredAt - a.occurredAt);
  const interacted = [...history.interacted];
  for (const e of fresh) if (!interacted.includes(e.externalProductId)) interacted.push(e.externalProductId);
  return { ...history, events: events.slice(0, HISTORY_LENGTH), interacted };
}

describe("a cached history taking in interactions just recorded", () => {
  test("says what a read would, for interactions in order, backdated, at equal times, repeated, and past the history's length", () => {
    const rng = createRng(5);
    for (let round = 0; round < 300; round++) {
      const length = [0, 3, HISTORY_LENGTH - 1, HISTORY_LENGTH][round % 4]!;
      const events = Array.from({ length }, (_, i) => ({
        externalProductId: `p-${Math.floor(rng() * 50)}`,
        type: "VIEW",
        value: 1,
        occurredAt: T0 - i * 1000,
      }));
      const history: UserHistory = {
        endUserId: 1,
        preferredCategories: [],
        priceRangeMin: null,
        priceRangeMax: null,
        events,
        interacted: [...new Set(events.map((e) => e.externalProductId))],
      };
      // As recorded (oldest first): mostly now, sometimes backdated into the history, sometimes at one time.
      const added = Array.from({ length: 1 + Math.floor(rng() * 3) }, (_, i) => ({
        externalProductId: `p-${Math.floor(rng() * 60)}`,
        interactionType: "VIEW",
        value: 1,
        occurredAt: new Date(
          round % 3 === 0 ? T0 - Math.floor(rng() * length) * 1000 : round % 3 === 1 ? T0 + i : T0,
        ),
      }));
      const expected = asRead(
        history,
        added.map((a) => ({ externalProductId: a.externalProductId, occurredAt: a.occurredAt.getTime() })),
      );
      const updated = withInteractions(history, added);
      expect(updated.events).toEqual(expected.events);
      expect(updated.interacted).toEqual(expected.interacted);
      // The history it replaced is left as it was.
      expect(history.events.length).toBe(length);
    }
  });
});
