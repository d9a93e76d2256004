/**
 * Decodes an artifact in a Bun Worker (src/snapshots/decode-worker.ts) and reads its HNSW indexes on
 * hnswlib's own threads, so loading a snapshot never holds the event loop that answers requests: a
 * 100k-item model's decode, array copies and index reads take seconds of CPU between them.
 */
import { unlink } from "node:fs/promises";
import { availableParallelism, tmpdir } from "node:os";
import {
  type AnnIndex,
  type AnnRows,
  type AnnSpace,
  attachAnnIndexes,
  contentAnnRows,
  denseRows,
  readAnnIndexFileAsync,
} from "../engine";
import { Slots } from "../shared/slots";
import type { DecodedArtifact, DecodeMessage, DecodeRequest, PlacedIndex } from "./decode-protocol";

export type { DecodedArtifact } from "./decode-protocol";

/**
 * Decodes under way at once in this process: half the cores, at least one; the rest wait their turn, in the
 * order asked. Each decode runs a worker of its own and holds the artifact's pages and the arrays copied out
 * of them for a moment, and competes for the CPU with the thread that answers requests. After a restart the
 * first requests of many tenants arrive together: decoding all their models at once added those peaks up,
 * and each load finished only about when all the others did.
 */
export const decodeSlots = new Slots(Math.max(1, Math.floor(availableParallelism() / 2)));

/**
 * The artifact decoded, its model's indexes read and attached (`annIndexes(model)` returns them). Bytes
 * passed in are moved to the worker: the caller must not use them afterwards.
 */
export function decodeArtifact(
  source: DecodeRequest["source"],
  annFiles: DecodeRequest["annFiles"],
): Promise<DecodedArtifact> {
  return decodeSlots.run(() => decodeNow(source, annFiles));
}

async function decodeNow(
  source: DecodeRequest["source"],
  annFiles: DecodeRequest["annFiles"],
): Promise<DecodedArtifact> {
  const decoded = await inWorker({ source, annFiles, temporaryDir: tmpdir() });
  const { model, ann } = decoded;
  const [factors, content] = await Promise.all([
    readIndex(ann.factors, model.als ? denseRows(model.als.itemFactors, model.als.k) : undefined, "ip"),
    readIndex(ann.content, model.content ? contentAnnRows(model.content) : undefined, "cosine"),
  ]);
  attachAnnIndexes(model, { factors, content });
  return decoded;
}

function inWorker(request: DecodeRequest): Promise<DecodedArtifact> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL("./decode-worker.ts", import.meta.url));
    let settled = false;
    const finish = (outcome: () => void) => {
      if (settled) return;
      settled = true;
      worker.terminate();
      outcome();
    };
    worker.addEventListener("message", (event: MessageEvent<DecodeMessage>) => {
      const message = event.data;
      if (message.type === "done") finish(() => resolve(message));
      else finish(() => reject(new Error(message.message)));
    });
    worker.addEventListener("error", (event: ErrorEvent) => {
      finish(() => reject(new Error(`snapshot decoding worker crashed: ${event.message}`)));
    });
    worker.addEventListener("close", () => {
      finish(() => reject(new Error("snapshot decoding worker exited before finishing")));
    });
    const transfer = "bytes" in request.source ? [request.source.bytes.buffer as ArrayBuffer] : [];
    worker.postMessage(request, transfer);
  });
}

async function readIndex(
  placed: PlacedIndex | null,
  rows: AnnRows | undefined,
  space: AnnSpace,
): Promise<AnnIndex | null> {
  if (placed === null || rows === undefined) return null;
  try {
    return await readAnnIndexFileAsync(placed.file, rows, space);
  } finally {
    if (placed.temporary) await unlink(placed.file).catch(() => {});
  }
}
