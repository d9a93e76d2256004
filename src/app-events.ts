/**
 * The app's in-process event buses, one set per app (built in createDeps). Writers emit after their
 * transaction commits; caches (the recommender, the snapshot registry, attribution) subscribe on start.
 */
import type { EndUserErased, EndUserUpdated } from "./modules/end-users/events";
import type { InteractionsRecorded } from "./modules/interactions/events";
import type { ProductsChanged } from "./modules/products/events";
import { EventBus } from "./shared/event-bus";

export interface AppEvents {
  /** An end user has new interactions (single create or a bulk chunk): one event per user per write. */
  readonly interactionsRecorded: EventBus<InteractionsRecorded>;
  /** Products were created, updated, revived, soft-deleted or bulk upserted. */
  readonly productsChanged: EventBus<ProductsChanged>;
  /** An end user was erased, here or (through the NOTIFY bridge) in another process. */
  readonly endUserErased: EventBus<EndUserErased>;
  /** An end user was created, or their profile changed, in this process. */
  readonly endUserUpdated: EventBus<EndUserUpdated>;
}

export function createAppEvents(): AppEvents {
  return {
    interactionsRecorded: new EventBus(),
    productsChanged: new EventBus(),
    endUserErased: new EventBus(),
    endUserUpdated: new EventBus(),
  };
}
