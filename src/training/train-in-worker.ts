/**
 * Runs one training in a Bun Worker so the event loop that serves requests never blocks on a fit. The
 * request's typed arrays are transferred (moved, not copied); the worker is terminated when the run ends,
 * fails or is aborted, so a stopped job leaves no thread behind.
 */
import { type TrainRequest, type TrainResult, transferList, type WorkerMessage } from "./worker-protocol";

/** The engine refused this data or these options; it is deterministic, so retrying will not help. */
export class TrainingDataError extends Error {
  override name = "TrainingDataError";
}

export class TrainingAbortedError extends Error {
  override name = "TrainingAbortedError";
}

export function trainInWorker(
  request: TrainRequest,
  onProgress: (stage: string, percent: number) => void,
  signal: AbortSignal,
): Promise<TrainResult> {
  return new Promise<TrainResult>((resolve, reject) => {
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
      } else if (message.type === "done") {
        finish(() => resolve(message));
      } else {
        const ErrorType = message.dataError ? TrainingDataError : Error;
        finish(() => reject(new ErrorType(message.message)));
      }
    });
    worker.addEventListener("error", (event: ErrorEvent) => {
      finish(() => reject(new Error(`training worker crashed: ${event.message}`)));
    });
    worker.addEventListener("close", () => {
      finish(() => reject(new Error("training worker exited before finishing")));
    });
    worker.postMessage(request, transferList(request));
  });
}
