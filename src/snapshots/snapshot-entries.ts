/**
 * The snapshots a process holds, bounded by an LRU on estimated bytes (SNAPSHOT_CACHE_MB). An account's
 * published snapshot is keyed by the account id; another stored model of the account (an experiment arm's
 * pinned version) by `modelKey(modelId)`. Both kinds share the one budget and the one LRU order.
 */
import type { Metrics } from "../http/metrics";
import type { Logger } from "../shared/logger";
import type { Snapshot } from "./types";

export interface SnapshotEntry {
  snapshot: Snapshot;
  watermark: string;
  checkedAt: number;
  /** The catalogue refresh under way, if any. */
  refreshing: Promise<void> | undefined;
  /**
   * The refresh a product change made in this process started: until it lands, requests wait for it rather
   * than rank over the catalogue as it was before the change (see `SnapshotRegistry.productsChanged`).
   */
  changed?: Promise<void>;
  /** The snapshot's bytes() when last counted (its derived state grows as it serves). */
  bytes: number;
  countedAt: number;
}

/** Account id for the published snapshot, `modelKey(modelId)` for another stored model (ids are unique). */
export type EntryKey = number | string;
export const modelKey = (modelId: number): string => `model:${modelId}`;

/** How often a served snapshot's size is counted again (its caches fill between two counts). */
const RECOUNT_MS = 1000;

export interface SnapshotEntriesOptions {
  readonly maxBytes: number;
  readonly logger: Logger;
  readonly metrics?: Pick<Metrics, "setSnapshotBytes">;
}

export class SnapshotEntries {
  private readonly entries = new Map<EntryKey, SnapshotEntry>();
  /** The loaded models other than the published one, per account (for account-wide updates). */
  private readonly modelsOf = new Map<number, Set<number>>();
  private totalBytes = 0;

  constructor(private readonly options: SnapshotEntriesOptions) {}

  get(key: EntryKey): SnapshotEntry | undefined {
    return this.entries.get(key);
  }

  has(key: EntryKey): boolean {
    return this.entries.has(key);
  }

  /** The account's loaded models other than the published one. */
  *otherModels(accountId: number): Generator<[EntryKey, SnapshotEntry]> {
    for (const modelId of this.modelsOf.get(accountId) ?? []) {
      const key = modelKey(modelId);
      const entry = this.entries.get(key);
      if (entry !== undefined) yield [key, entry];
    }
  }

  stats(): { snapshots: number; bytes: number; maxBytes: number } {
    return { snapshots: this.entries.size, bytes: this.totalBytes, maxBytes: this.options.maxBytes };
  }

  /** Adds (or replaces) an entry as the most recently used, then evicts down to the budget. */
  install(key: EntryKey, entry: Omit<SnapshotEntry, "bytes" | "countedAt">): void {
    const previous = this.entries.get(key);
    if (previous !== undefined) this.remove(key, previous);
    const { accountId, modelId } = entry.snapshot;
    const installed: SnapshotEntry = { ...entry, bytes: entry.snapshot.bytes(), countedAt: Date.now() };
    this.entries.set(key, installed);
    this.totalBytes += installed.bytes;
    if (typeof key === "number") {
      this.options.metrics?.setSnapshotBytes(accountId, installed.bytes);
      // A model loaded before it was published is now the account's own entry: one copy is enough.
      const other = this.entries.get(modelKey(modelId));
      if (other !== undefined) this.remove(modelKey(modelId), other);
    } else {
      const loaded = this.modelsOf.get(accountId) ?? new Set<number>();
      loaded.add(modelId);
      this.modelsOf.set(accountId, loaded);
    }
    this.bound(key);
  }

  /** Marks an entry as just used (Map order is the LRU order) and counts its size again when due. */
  touch(key: EntryKey, entry: SnapshotEntry): void {
    this.entries.delete(key);
    this.entries.set(key, entry);
    this.recount(key, entry);
  }

  remove(key: EntryKey, entry: SnapshotEntry): void {
    if (this.entries.get(key) !== entry) return;
    this.entries.delete(key);
    this.totalBytes -= entry.bytes;
    if (typeof key === "number") {
      this.options.metrics?.setSnapshotBytes(key, 0);
      return;
    }
    const loaded = this.modelsOf.get(entry.snapshot.accountId);
    loaded?.delete(entry.snapshot.modelId);
    if (loaded?.size === 0) this.modelsOf.delete(entry.snapshot.accountId);
  }

  /** Removes every snapshot of the account, published or not. */
  removeAccount(accountId: number): void {
    const published = this.entries.get(accountId);
    if (published !== undefined) this.remove(accountId, published);
    for (const [key, entry] of [...this.otherModels(accountId)]) this.remove(key, entry);
    this.modelsOf.delete(accountId);
  }

  clear(): void {
    this.entries.clear();
    this.modelsOf.clear();
    this.totalBytes = 0;
  }

  /** Evicts least recently used snapshots, oldest first, until the total fits; `keep` stays even when alone too big. */
  private bound(keep: EntryKey): void {
    for (const [key, e] of this.entries) {
      if (this.totalBytes <= this.options.maxBytes || key === keep) break;
      this.remove(key, e);
      this.options.logger.info("snapshot evicted (memory bound)", {
        accountId: e.snapshot.accountId,
        modelId: e.snapshot.modelId,
        bytes: e.bytes,
      });
    }
  }

  private recount(key: EntryKey, entry: SnapshotEntry): void {
    const now = Date.now();
    if (now - entry.countedAt < RECOUNT_MS) return;
    entry.countedAt = now;
    const bytes = entry.snapshot.bytes();
    if (bytes === entry.bytes) return;
    this.totalBytes += bytes - entry.bytes;
    entry.bytes = bytes;
    if (typeof key === "number") this.options.metrics?.setSnapshotBytes(key, bytes);
    this.bound(key);
  }
}
