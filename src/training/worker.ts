/**
 * The training worker: receives one account's typed arrays, fits and evaluates the engine's models, and
 * posts back the serialized model (its buffer transferred, not copied). Progress is forwarded as it comes;
 * the main thread throttles what reaches the database.
 */
import { runEngineTraining } from "./engine-api";
import type { TrainRequest, WorkerMessage } from "./worker-protocol";

declare const self: Worker;

const post = (message: WorkerMessage, transfer: ArrayBuffer[] = []) => self.postMessage(message, transfer);

self.addEventListener("message", (event: MessageEvent<TrainRequest>) => {
  const request = event.data;
  if (request.type !== "train") return;
  try {
    const result = runEngineTraining(
      request.events,
      request.items,
      request.options,
      request.published,
      (stage, percent) => post({ type: "progress", stage, percent }),
    );
    const engineBytes = result.engineBytes;
    post({ type: "done", ...result }, [engineBytes.buffer as ArrayBuffer]);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    // trainModel is a pure function of the data and options: running it again would throw again.
    post({ type: "error", message, dataError: true });
  }
});
