import { expect, test } from "bun:test";
import { deserializeModel } from "../../src/engine/serialize";
import { recommendForUser, similarItems } from "../../src/engine/serving";
import type { TrainMetrics } from "../../src/engine/train";
import { smallSynthetic } from "./helpers";

test("trainModel runs inside a Bun Worker (native kernels, HNSW) and its artifact serves in the parent", async () => {
  const data = smallSynthetic(8000, 11);
  const worker = new Worker(new URL("./train-worker.fixture.ts", import.meta.url).href);
  const reply = await new Promise<{ bytes: Uint8Array; metrics: TrainMetrics; stages: string[] }>(
    (resolve, reject) => {
      worker.onmessage = (e) => resolve(e.data);
      worker.onerror = (e) => reject(e);
      worker.postMessage({ events: data.events, items: data.items });
    },
  );
  worker.terminate();
  expect(reply.stages.at(-1)).toBe("done");
  expect(reply.metrics.ndcgAt10!).toBeGreaterThan(reply.metrics.popularityNdcgAt10!);
  const model = deserializeModel(reply.bytes);
  expect(model.ann.factors).not.toBeNull();
  expect(
    recommendForUser(model, { items: Int32Array.from([1, 2]), weights: Float32Array.from([1, 1]) }, 5).items
      .length,
  ).toBe(5);
  expect(similarItems(model, 3, 5).items.length).toBe(5);
});
