import { describe, expect, test } from "bun:test";
import { annIndexes, detachFromArtifact } from "../../src/engine/ann-files";
import type { Model } from "../../src/engine/model";
import { scoreForUser } from "../../src/engine/ranking/personal";
import { deserializeModel, serializeModel } from "../../src/engine/serialize";
import { topK } from "../../src/engine/topk";
import { trainModel } from "../../src/engine/train";
import type { History } from "../../src/engine/types";
import { interactionsFrom, smallSynthetic } from "./helpers";

const data = smallSynthetic();

/** The model's ranking as training measures it (and the service blends it): its own items left out. */
const recommendForUser = (model: Model, history: History, k: number) => ({
  items: topK(scoreForUser(model, history), k, null, history.items),
});

describe("trainModel", () => {
  const progress: [string, number][] = [];
  const result = trainModel({ events: data.events, items: data.items }, { seed: 42 }, (s, p) =>
    progress.push([s, p]),
  );

  test("measures on a hold-out and beats popularity on structured data", () => {
    const m = result.metrics;
    expect(m.evaluatedUsers).toBeGreaterThan(100);
    expect(m.ndcgAt10!).toBeGreaterThan(m.popularityNdcgAt10!);
    expect(m.recallAt20!).toBeGreaterThan(m.popularityRecallAt20!);
    expect(result.params["refitOnAllData"]).toBe(true);
  });

  test("reports progress from 0 to 100 without going backwards", () => {
    const pct = progress.map(([, p]) => p);
    expect(pct[0]).toBe(0);
    expect(pct.at(-1)).toBe(100);
    for (let i = 1; i < pct.length; i++) expect(pct[i]!).toBeGreaterThanOrEqual(pct[i - 1]! - 25);
    expect(pct.every((p) => p >= 0 && p <= 100)).toBe(true);
  });

  test("serialize → deserialize round-trips exactly and scores identically", () => {
    const bytes = serializeModel(result.model);
    const back = deserializeModel(bytes);
    expect(serializeModel(back)).toEqual(bytes);
    expect(back.ease!.b.data).toEqual(result.model.ease!.b.data);
    expect(back.categories.paths).toEqual(result.model.categories.paths);
    const history = { items: Int32Array.from([1, 5, 9]), weights: Float32Array.from([1, 2, 1]) };
    expect(scoreForUser(back, history)).toEqual(scoreForUser(result.model, history));
    // Unaligned input (e.g. a Buffer slice) still loads.
    const shifted = new Uint8Array(bytes.length + 1);
    shifted.set(bytes, 1);
    expect(serializeModel(deserializeModel(shifted.subarray(1)))).toEqual(bytes);
  });

  test("recommendations exclude the history and personalise new users by fold-in", () => {
    const history = { items: Int32Array.from([0, 1, 2]), weights: new Float32Array(3).fill(1) };
    const rec = recommendForUser(result.model, history, 10);
    expect(rec.items.length).toBe(10);
    for (const i of history.items) expect([...rec.items]).not.toContain(i);
    const other = recommendForUser(
      result.model,
      { items: Int32Array.from([250, 260]), weights: Float32Array.from([1, 1]) },
      10,
    );
    expect([...other.items]).not.toEqual([...rec.items]);
  });

  test("an ALS-primary model ranks by fold-in, and ranks the same once detached for serving", () => {
    const r = trainModel(
      { events: data.events, items: data.items },
      {
        search: false,
        easeTargetItems: 10,
        maxEaseMinSupport: 0,
        annMinItems: 0,
        als: { factors: 16, iterations: 6 },
      },
    );
    expect(r.model.ease).toBeNull();
    expect(r.model.ann.factors).not.toBeNull();
    expect(r.metrics.ndcgAt10!).toBeGreaterThan(r.metrics.popularityNdcgAt10!);
    const back = deserializeModel(serializeModel(r.model));
    const history = { items: Int32Array.from([3, 4, 5]), weights: new Float32Array(3).fill(1) };
    const viaAnn = recommendForUser(back, history, 10);
    expect(r.model.blend.cf).toBeGreaterThan(0);
    expect(viaAnn.items.length).toBe(10);
    for (const i of history.items) expect([...viaAnn.items]).not.toContain(i);

    // Detached for serving: the same answers, no array left on the artifact's buffer, index bytes dropped.
    const bytes = serializeModel(r.model);
    const served = detachFromArtifact(deserializeModel(bytes));
    expect(served.ann).toEqual({ factors: null, content: null });
    expect(annIndexes(served).factors).not.toBeNull();
    const buffers: ArrayBufferLike[] = [];
    const collect = (value: unknown): void => {
      if (ArrayBuffer.isView(value)) buffers.push(value.buffer);
      else if (value !== null && typeof value === "object") for (const v of Object.values(value)) collect(v);
    };
    collect(served);
    expect(buffers.length).toBeGreaterThan(5);
    expect(buffers).not.toContain(bytes.buffer);
    const again = recommendForUser(served, history, 10);
    expect([...again.items]).toEqual([...viaAnn.items]);
  });

  test("too little data still yields a model, with metrics marked insufficient", () => {
    const ev = interactionsFrom(
      Array.from({ length: 40 }, (_, i) => [i % 4, (i * 7) % 12, 0] as [number, number, number]),
      4,
      12,
    );
    const r = trainModel({ events: ev });
    expect(r.metrics.note).toBe("insufficient data");
    expect(r.metrics.ndcgAt10).toBeNull();
    expect(r.model.nItems).toBe(12);
  });
});
