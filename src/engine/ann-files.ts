/**
 * A loaded model's HNSW indexes and its release from the artifact's buffer, for long-lived serving. The
 * ranking itself lives in src/engine/ranking (pure) and src/modules/recommendations/ranking (over a
 * tenant's item table, filters and caches).
 */
import { contentAnnRows } from "./content";
import {
  type AnnIndex,
  type AnnRows,
  type AnnSpace,
  denseRows,
  deserializeAnnIndex,
  loadAnnIndexFile,
} from "./hnsw";
import type { Model } from "./model";

const annCache = new WeakMap<Model, { factors: AnnIndex | null; content: AnnIndex | null }>();

/** Where a model's HNSW indexes may be kept as files of their own (see `loadAnnIndexFile`). */
export interface AnnFiles {
  factors: string;
  content: string;
}

/**
 * HNSW indexes of a loaded model, materialised once from the artifact's bytes: through `files` when given
 * (read in place, written there first when missing), else through a temporary file.
 */
export function annIndexes(
  model: Model,
  files?: AnnFiles,
): { factors: AnnIndex | null; content: AnnIndex | null } {
  let c = annCache.get(model);
  if (!c) {
    const { als, content, ann } = model;
    const load = (bytes: Uint8Array, rows: AnnRows, space: AnnSpace, file?: string) =>
      file === undefined
        ? deserializeAnnIndex(bytes, rows, space)
        : loadAnnIndexFile(file, bytes, rows, space);
    c = {
      factors:
        ann.factors && als
          ? load(ann.factors, denseRows(als.itemFactors, als.k), "ip", files?.factors)
          : null,
      content:
        ann.content && content ? load(ann.content, contentAnnRows(content), "cosine", files?.content) : null,
    };
    annCache.set(model, c);
  }
  return c;
}

/**
 * Gives a model the HNSW indexes loaded for it elsewhere (read without blocking, see
 * `readAnnIndexFileAsync`), so `annIndexes` returns them instead of materialising its own.
 */
export function attachAnnIndexes(
  model: Model,
  indexes: { factors: AnnIndex | null; content: AnnIndex | null },
): void {
  annCache.set(model, indexes);
}

/**
 * Readies a model loaded from an artifact for long-lived serving: arrays that are views into the artifact's
 * buffer are copied out and the HNSW indexes are loaded (hnswlib keeps its own copy of them), then the index
 * bytes are dropped. Nothing references the artifact buffer afterwards, so its memory (the index bytes
 * included) is freed instead of being held beside hnswlib's copy for the life of the model.
 */
export function detachFromArtifact(model: Model, files?: AnnFiles): Model {
  const detach = (value: unknown): unknown => {
    if (ArrayBuffer.isView(value) && !(value instanceof DataView)) {
      const view = value as Float32Array;
      return view.byteLength === view.buffer.byteLength ? view : view.slice();
    }
    if (Array.isArray(value)) return value.map(detach);
    if (value !== null && typeof value === "object") {
      const record = value as Record<string, unknown>;
      for (const key of Object.keys(record)) record[key] = detach(record[key]);
    }
    return value;
  };
  const record = model as unknown as Record<string, unknown>;
  for (const key of Object.keys(record)) if (key !== "ann") record[key] = detach(record[key]);
  annIndexes(model, files);
  model.ann = { factors: null, content: null };
  return model;
}
