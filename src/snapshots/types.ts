/**
 * The tenant snapshot: everything a recommendation request reads, held in memory per account.
 *
 * A snapshot is built from the account's published model (the engine model plus the id maps stored with its
 * artifact) and the account's current product and end-user rows. Serving code reads it without SQL.
 *
 * Rules for readers (the recommendations module):
 * - Obtain it with `deps.snapshots.getSnapshot(accountId)` (async: may load from the database after a
 *   restart) or `deps.snapshots.peekSnapshot(accountId)` (sync: only what is already in memory). Both
 *   return `undefined` when the account has no published model: serve popularity/catalogue order then.
 * - Hold the reference for one request only. A newer model is swapped in by replacing the reference, never
 *   by mutating the old object, so a request that started on a snapshot finishes on it consistently.
 * - The only in-place mutations are the freshness fields of `items` (`deleted`, `inStock`, `prices`,
 *   `names`, `categories`, `brands`) and removals from `users.indexByExternalId`: single-slot writes that
 *   readers may observe mid-request, which is harmless (they only ever make an item or user disappear or
 *   show newer catalogue data).
 * - Always skip items with `items.deleted[i] === 1`. Items deleted after training stay in the arrays
 *   (the model's dense indices must not shift) but are flagged.
 * - Products created after training are not in the snapshot (they have no dense index); they become part of
 *   it at the next training.
 */
import type { EngineModel } from "../training/engine-api";
import type { DerivedState } from "./derived-state";

export interface SnapshotItems {
  /** Number of items; dense item index i is in [0, count) and matches the engine model's item index. */
  readonly count: number;
  /** Database id of products.id per dense index (a number: product ids stay far below 2^53). */
  readonly productIds: Float64Array;
  /** The caller's product id per dense index. */
  readonly externalIds: readonly string[];
  /** externalId → dense index; includes items that were deleted later (check `deleted`). */
  readonly indexByExternalId: ReadonlyMap<string, number>;
  /** products.id → dense index. */
  readonly indexByProductId: ReadonlyMap<number, number>;
  /** Current name (kept fresh for product updates). */
  readonly names: string[];
  /** Current price; NaN if unknown. */
  readonly prices: Float64Array;
  /** Current slash-separated category path, e.g. "electronics/phones". */
  readonly categories: string[];
  /** Current brand, or null. */
  readonly brands: (string | null)[];
  /** 1 = in stock, 0 = out of stock. */
  readonly inStock: Uint8Array;
  /** 1 = soft-deleted (or gone) since training: never serve it. */
  readonly deleted: Uint8Array;
  /** Mean RATING value per item at training time; NaN when the item had no ratings. */
  readonly meanRating: Float32Array;
  /** Number of RATING events per item at training time. */
  readonly ratingCount: Int32Array;
}

export interface SnapshotUsers {
  /** Number of users the model was trained on (dense user index space of the training run). */
  readonly count: number;
  /**
   * The caller's end-user id → dense user index of the training run, for users who were in the training
   * data. The engine model keeps no per-user vectors: every user, trained on or not, is scored by folding in
   * their latest history at request time (`scoreForUser` in src/engine/scoring.ts). Users erased after
   * training are removed from this map (evictEndUser); users created after training are absent.
   */
  readonly indexByExternalId: Map<string, number>;
}

export interface Snapshot {
  readonly accountId: number;
  /** models.id of the published model this snapshot was built from. */
  readonly modelId: number;
  /** models.version (1, 2, …: per account). */
  readonly version: number;
  /** models.algorithm, e.g. "als" or "ease". */
  readonly algorithm: string;
  /** When the model was trained (models.created_at). */
  readonly trainedAt: Date;
  /** When this process built the snapshot. */
  readonly loadedAt: Date;
  /** The deserialized engine model: pass it to the engine's serving primitives (src/engine/index.ts). */
  readonly model: EngineModel;
  readonly items: SnapshotItems;
  readonly users: SnapshotUsers;
  /** What serving derives from this snapshot (views, masks, orders, similar lists): owned and counted here. */
  readonly derived: DerivedState;
  /**
   * Estimated resident bytes: the model's arrays and HNSW indexes, the item/user tables and all derived
   * state. What the registry's LRU bound counts; it grows as serving fills the snapshot's caches.
   */
  bytes(): number;
}

/** What a training run stores next to the engine model bytes so that a snapshot can be rebuilt anywhere. */
export interface ArtifactEnvelope {
  readonly engineBytes: Uint8Array;
  readonly productIds: Float64Array;
  readonly externalIds: readonly string[];
  readonly endUserIds: Float64Array;
  readonly meanRating: Float32Array;
  readonly ratingCount: Int32Array;
}
