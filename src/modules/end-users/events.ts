/**
 * End-user erasure must reach every cache that holds the user's data (the recommender's per-user fold-in
 * vectors and histories, tenant snapshots), in this process and in every other process on the database.
 *
 * - `onEndUserErased(listener)`: subscribe; the listener drops whatever it holds for that user.
 * - The eraser emits in-process right after its transaction commits, and sends
 *   `NOTIFY end_user_erased, '{"accountId":…,"externalId":"…","endUserId":…}'`; `bridgeErasureNotifications`
 *   (started with the service) re-emits those notifications to local listeners, so delivery is at least
 *   once per process (this process hears its own NOTIFY too): listeners must be idempotent.
 */
import type { Database } from "../../db/client";
import type { Logger } from "../../shared/logger";

export const END_USER_ERASED_CHANNEL = "end_user_erased";

export interface EndUserErased {
  accountId: number;
  externalId: string;
  endUserId: number;
}

type Listener = (event: EndUserErased) => void;
const listeners = new Set<Listener>();

/** Subscribes; returns the unsubscribe function. Listeners must be cheap, idempotent and must not throw. */
export function onEndUserErased(listener: Listener): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

export function emitEndUserErased(event: EndUserErased): void {
  for (const listener of listeners) {
    try {
      listener(event);
    } catch {
      // One faulty cache must not keep the others from forgetting the user.
    }
  }
}

/** Announces an erasure to the other processes on the database. */
export async function notifyEndUserErased(
  database: Pick<Database, "notify">,
  event: EndUserErased,
): Promise<void> {
  await database.notify(
    END_USER_ERASED_CHANNEL,
    JSON.stringify({ accountId: event.accountId, externalId: event.externalId, endUserId: event.endUserId }),
  );
}

/** Forwards erasure notifications from any process to this process's listeners; returns the unsubscribe. */
export function bridgeErasureNotifications(
  database: Pick<Database, "listen">,
  logger: Logger,
): Promise<() => Promise<void>> {
  return database.listen(END_USER_ERASED_CHANNEL, (payload) => {
    const event = parseErasure(payload);
    if (event === undefined) logger.warn("ignored a malformed end_user_erased notification", { payload });
    else emitEndUserErased(event);
  });
}

function parseErasure(payload: string): EndUserErased | undefined {
  try {
    const value = JSON.parse(payload) as Partial<EndUserErased>;
    if (
      typeof value.accountId === "number" &&
      typeof value.externalId === "string" &&
      typeof value.endUserId === "number"
    ) {
      return { accountId: value.accountId, externalId: value.externalId, endUserId: value.endUserId };
    }
  } catch {
    // fall through
  }
  return undefined;
}

/** An end user's profile (preferred categories, price range, attributes) changed. */
export interface EndUserUpdated {
  accountId: number;
  externalId: string;
}

type UpdateListener = (event: EndUserUpdated) => void;
const updateListeners = new Set<UpdateListener>();

/**
 * Subscribes to profile changes made in this process (the recommender drops the user's cached history and
 * pages, and announces the change to other processes); returns the unsubscribe function.
 */
export function onEndUserUpdated(listener: UpdateListener): () => void {
  updateListeners.add(listener);
  return () => updateListeners.delete(listener);
}

export function emitEndUserUpdated(event: EndUserUpdated): void {
  for (const listener of updateListeners) {
    try {
      listener(event);
    } catch {
      // A faulty cache listener must not fail the write that already committed.
    }
  }
}
