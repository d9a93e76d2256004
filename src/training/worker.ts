/**
 * The training worker: receives one account's typed arrays (or reads them itself from Postgres, on a
 * connection of its own), fits and evaluates the engine's models, encodes the artifact and writes it to the
 * file it was given (and/or posts its bytes back, transferred, not copied). Progress is forwarded as it
 * comes; the main thread throttles what reaches the database.
 */
import { writeFileSync } from "node:fs";
import type { Database } from "../db/client";
import { configureNativeKernels } from "../engine/native";
import { lowerThisThreadsPriority } from "../shared/background-thread";
import type { EngineInteractions, EngineItemMeta } from "./engine-api";
import { runEngineTraining } from "./engine-api";
import { encodeEnvelope } from "./envelope";
import type {
  ArtifactIds,
  ItemsMessage,
  StoredRun,
  StoreOrder,
  TrainingCounts,
  TrainRequest,
  TrainResult,
  WorkerMessage,
} from "./worker-protocol";

declare const self: Worker;

lowerThisThreadsPriority();

const post = (message: WorkerMessage, transfer: ArrayBuffer[] = []) => self.postMessage(message, transfer);

/** Item records received ahead of the request, in order. */
const items: EngineItemMeta[] = [];

/** Refusals of the data itself: deterministic, so the job fails with this reason instead of retrying. */
class DataError extends Error {}

self.addEventListener("message", (event: MessageEvent<TrainRequest | ItemsMessage>) => {
  const request = event.data;
  if (request.type === "items") {
    for (const item of request.items) items.push(item);
    return;
  }
  if (request.type === "train") {
    configureNativeKernels(request.native);
    void train(request);
  }
});

interface Inputs {
  events: EngineInteractions;
  items: EngineItemMeta[];
  ids: ArtifactIds | undefined;
  counts?: TrainingCounts;
}

async function train(request: TrainRequest): Promise<void> {
  // A database handle of this thread's own, when it reads (and stores) the data itself.
  let database: Database | undefined;
  try {
    if (request.load !== undefined) {
      const { openDatabase } = await import("../db/client");
      database = await openDatabase({ url: request.load.databaseUrl, maxConnections: 2 });
    }
    await run(request, database);
  } finally {
    await database?.close().catch(() => {});
  }
}

async function run(request: TrainRequest, database: Database | undefined): Promise<void> {
  let inputs: Inputs;
  try {
    inputs =
      request.load === undefined || database === undefined
        ? {
            events: request.events,
            items: request.items.length > 0 ? request.items : items,
            ids: request.artifact?.ids,
          }
        : await load(database, request.load.accountId);
  } catch (error) {
    post({ type: "error", message: messageOf(error), dataError: error instanceof DataError });
    return;
  }
  try {
    // The hold-out is drawn by a hash of stable ids, so it does not depend on the order rows were read in.
    const options =
      inputs.ids === undefined
        ? request.options
        : { ...request.options, splitKeys: { users: inputs.ids.endUserIds, items: inputs.ids.productIds } };
    const result = runEngineTraining(
      inputs.events,
      inputs.items,
      options,
      request.published,
      (stage, percent) => post({ type: "progress", stage, percent }),
    );
    const order = request.artifact;
    if (order === undefined || inputs.ids === undefined) {
      post({ type: "done", ...result, artifact: null }, [result.engineBytes.buffer as ArrayBuffer]);
      return;
    }
    let artifact: Uint8Array;
    let path: string | null;
    try {
      // Encoding and writing here keeps the artifact's 100 MB off the thread that answers requests.
      artifact = encodeEnvelope({ engineBytes: result.engineBytes, ...inputs.ids });
      path = writeArtifact(order.path, artifact, order.keepBytes);
    } catch (error) {
      post({ type: "error", message: `could not store the model: ${messageOf(error)}`, dataError: false });
      return;
    }
    if (request.store !== undefined && database !== undefined && inputs.counts !== undefined) {
      const done: TrainResult = {
        type: "done",
        ...result,
        engineBytes: null,
        artifact: { bytes: null, length: artifact.length, path },
      };
      const stored = await store(
        database,
        request.store,
        request.load!.accountId,
        done,
        artifact,
        inputs.counts,
      );
      if (stored !== undefined) post({ ...done, stored });
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
}

/**
 * Reads the account's data here, on the database handle of this thread: the pages of rows are received,
 * parsed and turned into columns without the serving thread seeing any of them.
 */
async function load(database: Database, accountId: number): Promise<Inputs> {
  // Imported here: a worker given its data never loads the database code.
  const { loadTrainingData } = await import("./load-data");
  const data = await loadTrainingData(database, accountId, (loaded, total) =>
    post({ type: "loading", loaded, total }),
  );
  const counts: TrainingCounts = {
    users: data.events.nUsers,
    items: data.events.nItems,
    interactions: data.events.user.length,
  };
  if (counts.items === 0) throw new DataError("The account has no products to train on");
  if (counts.interactions === 0) {
    throw new DataError("The account has no interactions with current products to train on");
  }
  post({ type: "loaded", counts });
  const { events, items, ...ids } = data;
  return { events, items, ids, counts };
}

/**
 * Stores the run on this thread's connection (see StoreOrder): the artifact's chunks are encoded for the
 * wire here, not on the thread that answers requests. Posts the error itself and returns undefined when the
 * run could not be stored.
 */
async function store(
  database: Database,
  order: StoreOrder,
  accountId: number,
  result: TrainResult,
  bytes: Uint8Array,
  counts: TrainingCounts,
): Promise<StoredRun | undefined> {
  const { storeModel, ClaimLostError } = await import("./store-model");
  const { ArtifactCache } = await import("../snapshots/artifact-cache");
  const { createLogger } = await import("../shared/logger");
  const files =
    order.artifactDir === null ? undefined : new ArtifactCache(order.artifactDir, createLogger("silent"));
  const path = result.artifact?.path ?? null;
  try {
    const stored = await storeModel(
      database,
      {
        jobId: order.jobId,
        accountId,
        workerId: order.workerId,
        artifact: { bytes, length: bytes.length, path: files === undefined ? null : path },
        result,
        counts,
        erasuresSeen: order.erasuresSeen,
      },
      files,
    );
    return { modelId: stored.modelId, published: stored.decision.published, reason: stored.decision.reason };
  } catch (error) {
    const claimLost = error instanceof ClaimLostError;
    post({
      type: "error",
      message: `could not store the model: ${messageOf(error)}`,
      dataError: false,
      claimLost,
    });
    return undefined;
  }
}

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
