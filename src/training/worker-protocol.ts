/** Messages between the main thread and the training worker (src/training/worker.ts). */
import type { EngineInteractions, EngineItemMeta, EngineTrainOptions } from "./engine-types";

export interface TrainRequest {
  readonly type: "train";
  readonly events: EngineInteractions;
  readonly items: EngineItemMeta[];
  readonly options: EngineTrainOptions;
  /** The account's published model, whose configuration is refit on this run's split for a fair comparison. */
  readonly published: PublishedConfiguration | null;
  /**
   * What the worker does with the artifact it encodes (the model wrapped with these id maps): write it to
   * `path` (where the main thread picks it up by renaming it) and/or send its bytes back (`keepBytes`, for
   * a store that writes them into the database). Without `artifact` the bytes are sent back.
   */
  readonly artifact?: ArtifactOrder;
}

/** Item records sent ahead of a request (in slices); the request then comes with no items of its own. */
export interface ItemsMessage {
  readonly type: "items";
  readonly items: EngineItemMeta[];
}

export interface ArtifactOrder {
  readonly ids: ArtifactIds;
  /** Where to write the artifact; null: nowhere. */
  readonly path: string | null;
  /** Send the bytes back too; when false, a failed write fails the run (the file is the only copy). */
  readonly keepBytes: boolean;
}

/** The id maps stored beside the engine model (see ArtifactEnvelope). */
export interface ArtifactIds {
  readonly productIds: Float64Array;
  readonly externalIds: readonly string[];
  readonly endUserIds: Float64Array;
  readonly meanRating: Float32Array;
  readonly ratingCount: Int32Array;
}

export interface PublishedConfiguration {
  readonly modelId: number;
  readonly params: Record<string, unknown>;
}

export interface RankingFigures {
  ndcgAt10: number | null;
  recallAt20: number | null;
  coverageAt10: number | null;
  popularityNdcgAt10: number | null;
  evaluatedUsers: number;
  note: string | null;
}

/**
 * How the published model was scored on this run's hold-out: its configuration refit on the same training
 * part, or not refit because the new run chose the very same configuration (equal figures by construction),
 * or not at all because its stored params cannot be reproduced (the caller then falls back to stored figures).
 */
export interface BaselineOutcome {
  readonly modelId: number;
  readonly method: "refit-on-same-split" | "identical-configuration" | "not-reproducible";
  readonly note: string | null;
}

export interface TrainResult {
  readonly type: "done";
  /** The engine model's bytes, sent back when the request had no artifact order. */
  readonly engineBytes: Uint8Array | null;
  /** The encoded artifact: its size, the file it was written to, its bytes when asked for. */
  readonly artifact: {
    readonly bytes: Uint8Array | null;
    readonly length: number;
    readonly path: string | null;
  } | null;
  readonly algorithm: string;
  readonly params: Record<string, unknown>;
  readonly trainingSeconds: number;
  readonly metrics: RankingFigures;
  /** The published configuration's figures on the same hold-out; null without one or when not reproducible. */
  readonly baselineMetrics: RankingFigures | null;
  readonly baseline: BaselineOutcome | null;
}

export type WorkerMessage =
  | { readonly type: "progress"; readonly stage: string; readonly percent: number }
  | TrainResult
  | { readonly type: "error"; readonly message: string; readonly dataError: boolean };

/** Typed-array buffers of the request, moved (not copied) into the worker. */
export function transferList(request: TrainRequest): ArrayBuffer[] {
  const buffers = new Set<ArrayBuffer>();
  const add = (array: { buffer: ArrayBufferLike } | undefined) => {
    if (array !== undefined && array.buffer instanceof ArrayBuffer) buffers.add(array.buffer);
  };
  const e = request.events;
  for (const column of [e.user, e.item, e.type, e.value, e.ts, e.session]) add(column);
  const ids = request.artifact?.ids;
  if (ids !== undefined) {
    for (const column of [ids.productIds, ids.endUserIds, ids.meanRating, ids.ratingCount]) add(column);
  }
  return [...buffers];
}
