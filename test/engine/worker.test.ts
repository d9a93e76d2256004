import { expect, test } from "bun:test";
import { annIndexes } from "../../src/engine/ann-files";
import { searchAnn } from "../../src/engine/hnsw";
import { scoreForUser } from "../../src/engine/ranking/personal";
import { deserializeModel } from "../../src/engine/serialize";
import { topK } from "../../src/engine/topk";
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
  const history = { items: Int32Array.from([1, 2]), weights: Float32Array.from([1, 1]) };
  const top = topK(scoreForUser(model, history), 5, null, history.items);
  expect(top.length).toBe(5);
  expect([...top]).not.toContain(1);
  // The artifact's HNSW index loads in the parent and answers item 3's nearest neighbours.
  const factors = annIndexes(model).factors!;
  const k = model.als!.k;
  expect(searchAnn(factors, model.als!.itemFactors.subarray(3 * k, 4 * k), 5).items.length).toBe(5);
});
