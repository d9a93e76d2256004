/**
 * In-process notice that products changed (created, updated, revived, soft-deleted, bulk upserted), for
 * caches such as the recommender's tenant snapshot, which must stop serving a deleted product at once.
 * Listeners run synchronously after the change committed; they must be cheap and must not throw.
 */
export interface ProductsChanged {
  accountId: number;
  externalIds: readonly string[];
  /** True when the change was a soft delete. */
  deleted: boolean;
}

type Listener = (event: ProductsChanged) => void;
const listeners = new Set<Listener>();

/** Subscribes; returns the unsubscribe function. */
export function onProductsChanged(listener: Listener): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

export function emitProductsChanged(event: ProductsChanged): void {
  for (const listener of listeners) {
    try {
      listener(event);
    } catch {
      // A faulty cache listener must not fail the write that already committed.
    }
  }
}
