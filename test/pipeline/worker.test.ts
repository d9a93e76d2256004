import { describe, expect, test } from "bun:test";
import { deserializeEngineModel, type EngineInteractions } from "../../src/training/engine-api";
import { decodeEnvelope, encodeEnvelope } from "../../src/training/envelope";
import { TrainingAbortedError, trainInWorker } from "../../src/training/train-in-worker";

function smallEvents(): EngineInteractions {
  const nUsers = 30;
  const nItems = 20;
  const perUser = 8;
  const n = nUsers * perUser;
  const events: EngineInteractions = {
    user: new Int32Array(n),
    item: new Int32Array(n),
    type: new Uint8Array(n),
    value: new Float32Array(n).fill(1),
    ts: new Float64Array(n).fill(Date.UTC(2026, 0, 1)),
    nUsers,
    nItems,
  };
  for (let i = 0; i < n; i++) {
    const u = Math.floor(i / perUser);
    events.user[i] = u;
    events.item[i] = ((u % 2) * 10 + ((i * 7) % 10)) % nItems;
  }
  return events;
}

const items = Array.from({ length: 20 }, (_, i) => ({ name: `Item ${i}`, categoryPath: `c${i % 2}` }));

describe("training worker", () => {
  test("trains off the main thread, reports progress, and returns a model the engine can load", async () => {
    const events = smallEvents();
    const stages: [string, number][] = [];
    const result = await trainInWorker(
      {
        type: "train",
        events,
        items,
        options: { als: { factors: 8, iterations: 2 }, search: false },
        native: { enabled: true, compiler: "cc" },
        published: null,
      },
      (stage, percent) => stages.push([stage, percent]),
      new AbortController().signal,
    );
    // The columns were moved into the worker, not copied.
    expect(events.user.length).toBe(0);
    expect(stages.length).toBeGreaterThan(0);
    for (const [, percent] of stages) expect(percent).toBeGreaterThanOrEqual(0);
    expect(result.metrics.evaluatedUsers).toBeGreaterThan(0);
    expect(result.trainingSeconds).toBeGreaterThan(0);
    expect(deserializeEngineModel(result.engineBytes!).nItems).toBe(20);
  }, 120_000);

  test("aborting a run terminates the worker and rejects with TrainingAbortedError", async () => {
    const controller = new AbortController();
    const run = trainInWorker(
      {
        type: "train",
        events: smallEvents(),
        items,
        options: {},
        native: { enabled: true, compiler: "cc" },
        published: null,
      },
      () => controller.abort(),
      controller.signal,
    );
    await expect(run).rejects.toBeInstanceOf(TrainingAbortedError);
  }, 120_000);

  test("the artifact envelope round-trips the id maps and the engine bytes", () => {
    const envelope = {
      engineBytes: new Uint8Array([1, 2, 3, 4, 5]),
      productIds: Float64Array.from([10, 11, 12]),
      externalIds: ["a", "b/é", "c"],
      endUserIds: Float64Array.from([7, 9]),
      meanRating: Float32Array.from([Number.NaN, 4.5, 3]),
      ratingCount: Int32Array.from([0, 2, 1]),
    };
    const back = decodeEnvelope(encodeEnvelope(envelope));
    expect([...back.engineBytes]).toEqual([1, 2, 3, 4, 5]);
    expect([...back.productIds]).toEqual([10, 11, 12]);
    expect(back.externalIds).toEqual(["a", "b/é", "c"]);
    expect([...back.endUserIds]).toEqual([7, 9]);
    expect(Number.isNaN(back.meanRating[0])).toBe(true);
    expect(back.meanRating[1]).toBe(4.5);
    expect([...back.ratingCount]).toEqual([0, 2, 1]);
    expect(() => decodeEnvelope(new Uint8Array(16))).toThrow();
  });
});
