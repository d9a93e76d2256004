/**
 * End-user erasure must reach every cache that holds the user's data (the recommender's per-user fold-in
 * vectors and histories, tenant snapshots), in this process and in every other process on the database.
 *
 * - Subscribe on the app's `endUserErased` bus (src/app-events.ts); the listener drops whatever it holds
 *   for that user.
 * - The eraser emits on that bus right after its transaction commits, and sends
 *   `NOTIFY end_user_erased, '{"accountId":…,"externalId":"…","endUserId":…}'`; `bridgeErasureNotifications`
 *   (started with the service) re-emits those notifications on the app's bus, so delivery is at least
 *   once per process (this process hears its own NOTIFY too): listeners must be idempotent.
 */
import type { Database } from "../../db/client";
import type { EventBus } from "../../shared/event-bus";
import type { Logger } from "../../shared/logger";

export const END_USER_ERASED_CHANNEL = "end_user_erased";

export interface EndUserErased {
  accountId: number;
  externalId: string;
  endUserId: number;
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

/** Forwards erasure notifications from any process to this app's bus; returns the unsubscribe. */
export function bridgeErasureNotifications(
  database: Pick<Database, "listen">,
  logger: Logger,
  bus: EventBus<EndUserErased>,
): Promise<() => Promise<void>> {
  return database.listen(END_USER_ERASED_CHANNEL, (payload) => {
    const event = parseErasure(payload);
    if (event === undefined) logger.warn("ignored a malformed end_user_erased notification", { payload });
    else bus.emit(event);
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
