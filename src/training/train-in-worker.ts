/**
 * Runs one training in a Bun Worker so the event loop that serves requests never blocks on a fit. The
 * request's typed arrays are transferred (moved, not copied); the worker is terminated when the run ends,
 * fails or is aborted, so a stopped job leaves no thread behind.
 */
import {
  type ItemsMessage,
  type TrainingCounts,
  type TrainRequest,
  type TrainResult,
  transferList,
  type WorkerMessage,
} from "./worker-protocol";

/** The engine refused this data or these options; it is deterministic, so retrying will not help. */
export class TrainingDataError extends Error {
  override name = "TrainingDataError";
}

export class TrainingAbortedError extends Error {
  override name = "TrainingAbortedError";
}

/** The worker's store found the job claimed by another process (its heartbeat stalled): nothing was stored. */
export class TrainingClaimLostError extends Error {
  override name = "TrainingClaimLostError";
}

export interface TrainOutcome extends TrainResult {
  /** What the run trained on: counted by the worker when it read the data itself. */
  readonly counts: TrainingCounts;
}

/**
 * `onProgress` receives the fit's stages (percent of the fit). When the worker reads the data itself,
 * `onLoading` receives how far the read has come (`loaded` of `total`, a share of the id span) and `onLoaded`
 * what was read, before the fit.
 */
export function trainInWorker(
  request: TrainRequest,
  onProgress: (stage: string, percent: number) => void,
  signal: AbortSignal,
  onLoading?: (loaded: number, total: number) => void,
  onLoaded?: (counts: TrainingCounts) => void,
): Promise<TrainOutcome> {
  let counts: TrainingCounts = {
    users: request.events.nUsers,
    items: request.events.nItems,
    interactions: request.events.user.length,
  };
  return new Promise<TrainOutcome>((resolve, reject) => {
    if (signal.aborted) {
      reject(new TrainingAbortedError("training aborted before it started"));
      return;
    }
    const worker = new Worker(new URL("./worker.ts", import.meta.url));
    let settled = false;
    const finish = (outcome: () => void) => {
      if (settled) return;
      settled = true;
      signal.removeEventListener("abort", onAbort);
      worker.terminate();
      outcome();
    };
    const onAbort = () => finish(() => reject(new TrainingAbortedError("training aborted")));
    signal.addEventListener("abort", onAbort);
    worker.addEventListener("message", (event: MessageEvent<WorkerMessage>) => {
      const message = event.data;
      if (message.type === "progress") {
        if (!settled) onProgress(message.stage, message.percent);
      } else if (message.type === "loading") {
        if (!settled) onLoading?.(message.loaded, message.total);
      } else if (message.type === "loaded") {
        counts = message.counts;
        if (!settled) onLoaded?.(counts);
      } else if (message.type === "done") {
        finish(() => resolve({ ...message, counts }));
      } else {
        const ErrorType = message.claimLost
          ? TrainingClaimLostError
          : message.dataError
            ? TrainingDataError
            : Error;
        finish(() => reject(new ErrorType(message.message)));
      }
    });
    worker.addEventListener("error", (event: ErrorEvent) => {
      finish(() => reject(new Error(`training worker crashed: ${event.message}`)));
    });
    worker.addEventListener("close", () => {
      finish(() => reject(new Error("training worker exited before finishing")));
    });
    post(worker, request, () => settled).catch((error: unknown) =>
      finish(() => reject(error instanceof Error ? error : new Error(String(error)))),
    );
  });
}

/** Items per message: cloning 100k item records at once held the serving thread for seconds. */
const ITEM_SLICE = 1_000;

/**
 * Sends the item records in slices, a turn of the event loop apart, then the request itself (its typed
 * arrays moved, not copied), so no single clone holds the thread that answers requests for long.
 */
async function post(worker: Worker, request: TrainRequest, stopped: () => boolean): Promise<void> {
  for (let at = 0; at < request.items.length; at += ITEM_SLICE) {
    if (stopped()) return;
    const message: ItemsMessage = { type: "items", items: request.items.slice(at, at + ITEM_SLICE) };
    worker.postMessage(message);
    await new Promise((resolve) => setImmediate(resolve));
  }
  if (stopped()) return;
  worker.postMessage({ ...request, items: [] }, transferList(request));
}
