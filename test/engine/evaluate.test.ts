import { describe, expect, test } from "bun:test";
import { evaluateRanking, hashHoldoutSplit, heldOutSets, holdoutSplit } from "../../src/engine/evaluate";
import { buildWeightedMatrix, selectEvents } from "../../src/engine/weighting";
import { interactionsFrom, smallSynthetic } from "./helpers";

describe("hold-out protocol", () => {
  const data = smallSynthetic();
  const split = holdoutSplit(data.events, { seed: 42 });

  test("is deterministic for a seed and holds out about 20% of each eligible user's items", () => {
    const again = holdoutSplit(data.events, { seed: 42 });
    expect([...again.testIdx]).toEqual([...split.testIdx]);
    const ratio = split.testIdx.length / data.events.user.length;
    expect(ratio).toBeGreaterThan(0.15);
    expect(ratio).toBeLessThan(0.25);
  });

  test("never puts the same user-item pair on both sides", () => {
    const trainPairs = new Set<string>();
    for (const e of split.trainIdx) trainPairs.add(`${data.events.user[e]}:${data.events.item[e]}`);
    for (const e of split.testIdx)
      expect(trainPairs.has(`${data.events.user[e]}:${data.events.item[e]}`)).toBe(false);
  });

  test("users with fewer than 5 interactions keep everything in training", () => {
    const ev = interactionsFrom(
      [
        [0, 0, 0],
        [0, 1, 0],
        [0, 2, 0],
        [0, 3, 0],
        [1, 0, 0],
        [1, 1, 0],
        [1, 2, 0],
        [1, 3, 0],
        [1, 4, 0],
      ],
      2,
      5,
    );
    const s = holdoutSplit(ev, { seed: 1 });
    expect([...s.testIdx].every((e) => ev.user[e] === 1)).toBe(true);
    expect(s.testIdx.length).toBe(1);
  });

  test("an oracle scorer gets NDCG@10 = Recall@20 = 1 and popularity does worse", () => {
    const train = buildWeightedMatrix(selectEvents(data.events, split.trainIdx));
    const held = heldOutSets(data.events, split, train);
    const oracle = evaluateRanking(train, held, (u, out) => {
      out.fill(0);
      for (const i of held.get(u)!) out[i] = 1;
    });
    expect(oracle.ndcgAt10).toBeCloseTo(1, 9);
    expect(oracle.recallAt20).toBeCloseTo(1, 9);
    const counts = new Float32Array(train.nCols);
    for (const i of train.indices) counts[i]!++;
    const pop = evaluateRanking(train, held, (_u, out) => out.set(counts));
    expect(pop.ndcgAt10!).toBeLessThan(0.9);
    expect(pop.coverageAt10!).toBeLessThan(0.2);
  });

  test("too few evaluable users yields 'insufficient data' rather than numbers", () => {
    const ev = interactionsFrom(
      Array.from({ length: 30 }, (_, i) => [i % 3, i % 10, 0] as [number, number, number]),
      3,
      10,
    );
    const s = holdoutSplit(ev);
    const train = buildWeightedMatrix(selectEvents(ev, s.trainIdx));
    const r = evaluateRanking(train, heldOutSets(ev, s, train), (_u, out) => out.fill(0));
    expect(r.note).toBe("insufficient data");
    expect(r.ndcgAt10).toBeNull();
  });
});

describe("hash hold-out", () => {
  const data = smallSynthetic();
  const pairs = (events: typeof data.events, idx: Int32Array) =>
    new Set([...idx].map((e) => `${events.user[e]}:${events.item[e]}`));

  test("holds out about 20% of pairs, never one pair on both sides, whatever order the events came in", () => {
    const split = hashHoldoutSplit(data.events, { seed: 42 });
    const ratio = split.testIdx.length / data.events.user.length;
    expect(ratio).toBeGreaterThan(0.15);
    expect(ratio).toBeLessThan(0.25);
    const test = pairs(data.events, split.testIdx);
    for (const pair of pairs(data.events, split.trainIdx)) expect(test.has(pair)).toBe(false);
    // The same events in reverse order: the same pairs are held out.
    const n = data.events.user.length;
    const reversed = selectEvents(
      data.events,
      Int32Array.from({ length: n }, (_, i) => n - 1 - i),
    );
    const again = hashHoldoutSplit(reversed, { seed: 42 });
    expect(pairs(reversed, again.testIdx)).toEqual(test);
    expect(hashHoldoutSplit(data.events, { seed: 7 }).testIdx).not.toEqual(split.testIdx);
  });
});
