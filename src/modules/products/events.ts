/**
 * In-process notice that products changed (created, updated, revived, soft-deleted, bulk upserted), for
 * caches such as the recommender's tenant snapshot, which must stop serving a deleted product at once.
 * Sent on the app's `productsChanged` bus (src/app-events.ts) after the change committed.
 */
export interface ProductsChanged {
  accountId: number;
  externalIds: readonly string[];
  /** True when the change was a soft delete. */
  deleted: boolean;
}
