/** Messages between the main thread and the training worker (src/training/worker.ts). */
import type { EngineInteractions, EngineItemMeta, EngineTrainOptions } from "./engine-api";

export interface TrainRequest {
  readonly type: "train";
  readonly events: EngineInteractions;
  readonly items: EngineItemMeta[];
  readonly options: EngineTrainOptions;
}

export interface RankingFigures {
  ndcgAt10: number | null;
  recallAt20: number | null;
  coverageAt10: number | null;
  popularityNdcgAt10: number | null;
  evaluatedUsers: number;
  note: string | null;
}

export interface TrainResult {
  readonly type: "done";
  readonly engineBytes: Uint8Array;
  readonly algorithm: string;
  readonly params: Record<string, unknown>;
  readonly trainingSeconds: number;
  readonly metrics: RankingFigures;
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
  return [...buffers];
}
