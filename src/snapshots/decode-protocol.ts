/** Messages between the snapshot loader and its decoding worker (src/snapshots/decode-worker.ts). */
import type { EngineModel } from "../training/engine-api";

export interface DecodeRequest {
  /** The artifact as a file (memory-mapped by the worker) or as bytes read from the database (moved in). */
  readonly source: { readonly path: string } | { readonly bytes: Uint8Array };
  /** Where the model's HNSW indexes are kept as files; absent: temporary files, deleted once read. */
  readonly annFiles: { readonly factors: string; readonly content: string } | null;
  /** Directory for the temporary index files when `annFiles` is null. */
  readonly temporaryDir: string;
}

/** An index the worker placed in a file, ready to be read by hnswlib. */
export interface PlacedIndex {
  readonly file: string;
  /** A file of this load only: delete it once read. */
  readonly temporary: boolean;
}

export interface DecodedArtifact {
  readonly type: "done";
  /** The engine model with arrays of its own (none a view into the artifact) and no index bytes. */
  readonly model: EngineModel;
  /** In-memory bytes of the model: its arrays and the HNSW indexes hnswlib will hold. */
  readonly modelBytes: number;
  readonly ann: { readonly factors: PlacedIndex | null; readonly content: PlacedIndex | null };
  readonly productIds: Float64Array;
  readonly externalIds: readonly string[];
  readonly endUserIds: Float64Array;
  readonly meanRating: Float32Array;
  readonly ratingCount: Int32Array;
}

export type DecodeMessage = DecodedArtifact | { readonly type: "error"; readonly message: string };
