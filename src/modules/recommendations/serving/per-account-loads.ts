/**
 * A small per-account cache of loads in flight or done: entries expire after a TTL, the least recently
 * loaded account is dropped past a bound, and a failed load is forgotten so the next call retries.
 */
interface Entry<V> {
  key: unknown;
  value: Promise<V>;
  loadedAt: number;
  /** The value once loaded. */
  loaded?: V;
}

export class PerAccountLoads<V> {
  private readonly entries = new Map<number, Entry<V>>();

  constructor(
    private readonly ttlMs: number,
    private readonly maxAccounts: number,
  ) {}

  /** The cached value when it is loaded and fresh (and `key` matches), without waiting; else undefined. */
  loaded(accountId: number, key: unknown = undefined): V | undefined {
    const hit = this.entries.get(accountId);
    return hit !== undefined && hit.key === key && Date.now() - hit.loadedAt < this.ttlMs
      ? hit.loaded
      : undefined;
  }

  /** The cached value for the account, or a fresh `load()`; `key` (e.g. a snapshot) must match too. */
  get(accountId: number, load: () => Promise<V>, key: unknown = undefined): Promise<V> {
    const hit = this.entries.get(accountId);
    if (hit !== undefined && hit.key === key && Date.now() - hit.loadedAt < this.ttlMs) return hit.value;
    const entry: Entry<V> = { key, value: load(), loadedAt: Date.now() };
    this.entries.delete(accountId);
    this.entries.set(accountId, entry);
    entry.value.then(
      (value) => {
        entry.loaded = value;
      },
      () => {
        if (this.entries.get(accountId) === entry) this.entries.delete(accountId);
      },
    );
    if (this.entries.size > this.maxAccounts) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
    return entry.value;
  }

  invalidate(accountId: number): void {
    this.entries.delete(accountId);
  }

  clear(): void {
    this.entries.clear();
  }
}
