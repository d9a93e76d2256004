/** Messages between the main thread and the training worker (src/training/worker.ts). */
import type { NativeKernelSettings } from "../engine/native";
import type { EngineInteractions, EngineItemMeta, EngineTrainOptions } from "./engine-types";

export interface TrainRequest {
  readonly type: "train";
  /** The data, read by the caller (typed arrays moved in); empty when `load` asks the worker to read it. */
  readonly events: EngineInteractions;
  readonly items: EngineItemMeta[];
  /**
   * Read the account's training data in the worker, on a connection of its own (Postgres): the rows are
   * then received and converted off the thread that answers requests. The artifact's id maps come from
   * what it reads (an `artifact.ids` given is ignored).
   */
  readonly load?: LoadOrder;
  /**
   * With `load`: store the finished run in the worker too (model row, artifact chunks, publication and the
   * job's terminal state, in one transaction on the worker's connection), so the artifact's bytes are never
   * encoded for the wire on the serving thread. The done message then carries what was stored.
   */
  readonly store?: StoreOrder;
  readonly options: EngineTrainOptions;
  /** How the worker's thread loads the C kernels: the process's own settings (Config.nativeKernels). */
  readonly native: NativeKernelSettings;
  /** The account's published model, whose configuration is refit on this run's split for a fair comparison. */
  readonly published: PublishedConfiguration | null;
  /**
   * What the worker does with the artifact it encodes (the model wrapped with these id maps): write it to
   * `path` (where the main thread picks it up by renaming it) and/or send its bytes back (`keepBytes`, for
   * a store that writes them into the database). Without `artifact` the bytes are sent back.
   */
  readonly artifact?: ArtifactOrder;
}

export interface LoadOrder {
  readonly databaseUrl: string;
  readonly accountId: number;
}

export interface StoreOrder {
  readonly jobId: number;
  /** The job's claim: the terminal write is guarded by it. */
  readonly workerId: string;
  /** Where the process keeps local copies of artifacts (the staged file is renamed there); null: none. */
  readonly artifactDir: string | null;
  /** The account's erasure count read before the data was (see store-model.ts). */
  readonly erasuresSeen: number;
}

/** A run stored by the worker (see StoreOrder). */
export interface StoredRun {
  readonly modelId: number;
  readonly published: boolean;
  readonly reason: string;
}

/** What a run trained on. */
export interface TrainingCounts {
  readonly users: number;
  readonly items: number;
  readonly interactions: number;
}

/** Item records sent ahead of a request (in slices); the request then comes with no items of its own. */
export interface ItemsMessage {
  readonly type: "items";
  readonly items: EngineItemMeta[];
}

export interface ArtifactOrder {
  /** Absent when the worker reads the data itself (`load`). */
  readonly ids?: ArtifactIds;
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
  /** Present when the worker stored the run itself (a StoreOrder). */
  readonly stored?: StoredRun;
}

export type WorkerMessage =
  | { readonly type: "progress"; readonly stage: string; readonly percent: number }
  /** While the worker reads the data itself: how far it has come, `loaded` of `total` (a share of the id span). */
  | { readonly type: "loading"; readonly loaded: number; readonly total: number }
  /** The worker's data is read (posted before the fit starts). */
  | { readonly type: "loaded"; readonly counts: TrainingCounts }
  | TrainResult
  | {
      readonly type: "error";
      readonly message: string;
      readonly dataError: boolean;
      /** The worker's store found the job claimed by another process: nothing was stored. */
      readonly claimLost?: boolean;
    };

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
