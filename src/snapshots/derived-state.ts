/**
 * What serving derives from a snapshot (the recommender's view of it, eligibility masks, listing orders,
 * similar-item lists, ...) kept on the snapshot itself rather than in module-level maps keyed by it: the state
 * lives and dies with its snapshot, and `bytes()` counts it, so the registry's memory bound (SNAPSHOT_CACHE_MB)
 * covers everything a loaded model costs, not only its arrays.
 *
 * Also carries the items revision: a counter moved whenever the snapshot's item arrays are written in place
 * (freshness refresh, in-process deletion), so caches derived from those arrays know when to rebuild.
 */

/** A derived value and how to measure it (called when the owner's bytes are counted). */
interface Slot {
  readonly value: unknown;
  readonly bytes: (value: never) => number;
}

export class DerivedState {
  private revision = 0;
  private readonly slots = new Map<string, Slot>();

  itemsRevision(): number {
    return this.revision;
  }

  bumpItemsRevision(): void {
    this.revision++;
  }

  /**
   * The value kept under `key`, built on first use. `bytes` measures it whenever the state is counted (so a
   * cache that grows is counted as it is, not as it was built).
   */
  get<T>(key: string, build: () => T, bytes: (value: T) => number): T {
    const slot = this.slots.get(key);
    if (slot !== undefined) return slot.value as T;
    const value = build();
    this.slots.set(key, { value, bytes: bytes as (value: never) => number });
    return value;
  }

  /** Estimated resident bytes of every derived value. */
  bytes(): number {
    let sum = 0;
    for (const slot of this.slots.values()) sum += (slot.bytes as (value: unknown) => number)(slot.value);
    return sum;
  }
}
