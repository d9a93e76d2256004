/**
 * The training worker: receives one account's typed arrays, fits and evaluates the engine's models, encodes
 * the artifact and writes it to the file it was given (and/or posts its bytes back, transferred, not
 * copied). Progress is forwarded as it comes; the main thread throttles what reaches the database.
 */
import { writeFileSync } from "node:fs";
import type { EngineItemMeta } from "./engine-api";
import { runEngineTraining } from "./engine-api";
import { encodeEnvelope } from "./envelope";
import type { ItemsMessage, TrainRequest, WorkerMessage } from "./worker-protocol";

declare const self: Worker;

const post = (message: WorkerMessage, transfer: ArrayBuffer[] = []) => self.postMessage(message, transfer);

/** Item records received ahead of the request, in order. */
const items: EngineItemMeta[] = [];

self.addEventListener("message", (event: MessageEvent<TrainRequest | ItemsMessage>) => {
  const request = event.data;
  if (request.type === "items") {
    for (const item of request.items) items.push(item);
    return;
  }
  if (request.type !== "train") return;
  try {
    const result = runEngineTraining(
      request.events,
      request.items.length > 0 ? request.items : items,
      request.options,
      request.published,
      (stage, percent) => post({ type: "progress", stage, percent }),
    );
    const order = request.artifact;
    if (order === undefined) {
      post({ type: "done", ...result, artifact: null }, [result.engineBytes.buffer as ArrayBuffer]);
      return;
    }
    let artifact: Uint8Array;
    let path: string | null;
    try {
      // Encoding and writing here keeps the artifact's 100 MB off the thread that answers requests.
      artifact = encodeEnvelope({ engineBytes: result.engineBytes, ...order.ids });
      path = writeArtifact(order.path, artifact, order.keepBytes);
    } catch (error) {
      post({ type: "error", message: `could not store the model: ${messageOf(error)}`, dataError: false });
      return;
    }
    const bytes = order.keepBytes ? artifact : null;
    post(
      { type: "done", ...result, engineBytes: null, artifact: { bytes, length: artifact.length, path } },
      bytes === null ? [] : [bytes.buffer as ArrayBuffer],
    );
  } catch (error) {
    // trainModel is a pure function of the data and options: running it again would throw again.
    post({ type: "error", message: messageOf(error), dataError: true });
  }
});

/** The path written, or null when there was none or (with the bytes kept) the write failed. */
function writeArtifact(path: string | null, bytes: Uint8Array, keepBytes: boolean): string | null {
  if (path === null) return null;
  try {
    writeFileSync(path, bytes);
    return path;
  } catch (error) {
    if (!keepBytes) throw error;
    return null;
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
