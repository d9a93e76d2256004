/**
 * Decodes a model artifact off the serving thread: maps the file (or takes the bytes read from the
 * database), decodes the envelope and the engine model, copies every array out of the artifact into a
 * buffer of its own, and writes the HNSW index sections to their files. What it posts back is moved, not
 * copied, so the thread that answers requests only receives finished arrays.
 */
import { join } from "node:path";
import { deserializeModel, modelArrayBytes, placeAnnIndexFile } from "../engine";
import { lowerThisThreadsPriority } from "../shared/background-thread";
import { decodeEnvelope } from "../training/envelope";
import type { DecodedArtifact, DecodeMessage, DecodeRequest, PlacedIndex } from "./decode-protocol";

declare const self: Worker;

lowerThisThreadsPriority();

self.addEventListener("message", (event: MessageEvent<DecodeRequest>) => {
  try {
    const decoded = decode(event.data);
    self.postMessage(decoded, transferables(decoded));
  } catch (error) {
    const message: DecodeMessage = {
      type: "error",
      message: error instanceof Error ? error.message : String(error),
    };
    self.postMessage(message);
  }
});

function decode(request: DecodeRequest): DecodedArtifact {
  const { source } = request;
  // Copy-on-write: nothing written to the mapping reaches the file.
  const bytes = "path" in source ? Bun.mmap(source.path, { shared: false }) : source.bytes;
  const envelope = decodeEnvelope(bytes);
  const model = deserializeModel(envelope.engineBytes);
  // hnswlib holds the indexes in memory once read, so they count as much as the bytes they are read from.
  const modelBytes = modelArrayBytes(model);
  const place = (name: "factors" | "content", index: Uint8Array | null): PlacedIndex | null => {
    if (index === null) return null;
    const kept = request.annFiles?.[name];
    if (kept !== undefined && placeAnnIndexFile(kept, index)) return { file: kept, temporary: false };
    const file = join(request.temporaryDir, `ann-${process.pid}-${crypto.randomUUID()}.${name}.hnsw`);
    if (!placeAnnIndexFile(file, index)) throw new Error(`could not write the model's ${name} index`);
    return { file, temporary: true };
  };
  const ann = {
    factors: model.als ? place("factors", model.ann.factors) : null,
    content: model.content ? place("content", model.ann.content) : null,
  };
  model.ann = { factors: null, content: null };
  ownArrays(model as unknown as Record<string, unknown>);
  return {
    type: "done",
    model,
    modelBytes,
    ann,
    productIds: envelope.productIds,
    externalIds: envelope.externalIds,
    endUserIds: envelope.endUserIds,
    meanRating: envelope.meanRating,
    ratingCount: envelope.ratingCount,
  };
}

/** Arrays that are views into the artifact are copied out, so each can be moved on its own buffer. */
function ownArrays(record: Record<string, unknown>): void {
  for (const key of Object.keys(record)) {
    const value = record[key];
    if (ArrayBuffer.isView(value) && !(value instanceof DataView)) {
      const view = value as Uint8Array;
      if (view.byteOffset !== 0 || view.byteLength !== view.buffer.byteLength) record[key] = view.slice();
    } else if (Array.isArray(value)) {
      const wrapped = { ...value } as Record<string, unknown>;
      ownArrays(wrapped);
      record[key] = value.map((_, i) => wrapped[i]);
    } else if (value !== null && typeof value === "object") {
      ownArrays(value as Record<string, unknown>);
    }
  }
}

function transferables(value: unknown, into = new Set<ArrayBuffer>()): ArrayBuffer[] {
  if (ArrayBuffer.isView(value)) {
    if (value.buffer instanceof ArrayBuffer) into.add(value.buffer);
  } else if (Array.isArray(value)) {
    for (const v of value) transferables(v, into);
  } else if (value !== null && typeof value === "object") {
    for (const v of Object.values(value)) transferables(v, into);
  }
  return [...into];
}
