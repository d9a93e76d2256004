/**
 * The per-process registry of tenant snapshots: lazily loaded from the published model's artifact, bounded
 * by an LRU on estimated bytes, and replaced in the background when a new model is published (NOTIFY
 * "model_published" from any process), so serving keeps answering from the old snapshot until the new one
 * is ready and then switches by swapping one reference.
 *
 * Besides the published model, an account may have other stored models loaded on request (a model version
 * an experiment arm pins, `getModelSnapshot`). They share the same byte budget and LRU order as the published
 * snapshots, get the same catalogue freshness and erasure updates, and are simply loaded again after an
 * eviction. A publication never replaces them: a model id's artifact never changes.
 */
import { and, desc, eq } from "drizzle-orm";
import type { AppEvents } from "../app-events";
import type { Database } from "../db/client";
import { models } from "../db/schema";
import type { Metrics } from "../http/metrics";
import type { Logger } from "../shared/logger";
import { ArtifactCache } from "./artifact-cache";
import { buildSnapshot } from "./build";
import { refreshProducts } from "./freshness";
import { MODEL_PUBLISHED_CHANNEL, type ModelPublishedEvent, parseEvent } from "./model-published";
import { bumpItemsRevision } from "./revision";
import { type EntryKey, modelKey, SnapshotEntries, type SnapshotEntry } from "./snapshot-entries";
import type { Snapshot } from "./types";

export interface SnapshotRegistryOptions {
  database: Database;
  logger: Logger;
  maxBytes: number;
  /** This app's catalogue and erasure events. */
  events: Pick<AppEvents, "productsChanged" | "endUserErased">;
  /** How stale the item table may get before the next access refreshes it in the background. */
  productRefreshMs?: number;
  /** How long "this account has no published model" is believed without a NOTIFY saying otherwise. */
  absentTtlMs?: number;
  metrics?: Pick<Metrics, "setSnapshotBytes" | "cacheHit" | "cacheMiss">;
  /** Directory for local copies of artifacts (fast loads after a restart); absent: always read Postgres. */
  artifactDir?: string;
  /** The process's artifact files (primary on the embedded store); takes precedence over `artifactDir`. */
  artifacts?: ArtifactCache;
}

const ERASURE_MEMORY_MS = 10 * 60_000;

export class SnapshotRegistry {
  private readonly entries: SnapshotEntries;
  private readonly absent = new Map<number, number>();
  private readonly loading = new Map<number, Promise<Snapshot | undefined>>();
  private readonly modelLoads = new Map<number, Promise<Snapshot | undefined>>();
  /** Models that could not be loaded (no stored artifact), and since when: not tried again for absentTtlMs. */
  private readonly modelAbsent = new Map<number, number>();
  /** The model id a load under way is building, per account (a NOTIFY and a direct call may both ask). */
  private readonly loadingModel = new Map<number, number>();
  /** Recent erasures per account, re-applied to snapshots whose load raced with the erasure. */
  private readonly erasures = new Map<number, Map<string, number>>();
  private unlisten: (() => Promise<void>) | undefined;
  private unsubscribe: (() => void)[] = [];
  private stopped = false;
  private readonly artifacts: ArtifactCache | undefined;

  constructor(private readonly options: SnapshotRegistryOptions) {
    this.entries = new SnapshotEntries(options);
    this.artifacts =
      options.artifacts ??
      (options.artifactDir === undefined
        ? undefined
        : new ArtifactCache(options.artifactDir, options.logger));
  }

  async start(): Promise<void> {
    this.stopped = false;
    this.unlisten = await this.options.database.listen(MODEL_PUBLISHED_CHANNEL, (payload) => {
      const event = parseEvent(payload);
      if (event !== undefined) void this.onModelPublished(event);
    });
    // Catalogue and erasure events of this process; other processes' changes arrive through NOTIFY
    // (erasure) or the periodic product refresh.
    this.unsubscribe = [
      this.options.events.endUserErased.on((event) => this.evictEndUser(event.accountId, event.externalId)),
      this.options.events.productsChanged.on((event) =>
        this.productsChanged(event.accountId, event.deleted ? event.externalIds : []),
      ),
    ];
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const unsubscribe of this.unsubscribe.splice(0)) unsubscribe();
    await this.unlisten?.().catch(() => {});
    this.unlisten = undefined;
    await Promise.allSettled([...this.loading.values(), ...this.modelLoads.values()]);
    await this.artifacts?.settle();
    this.entries.clear();
  }

  /**
   * The snapshot already in memory, or undefined (never loads). Undefined too while a product change made in
   * this process is being taken in: `getSnapshot` waits for it.
   */
  peekSnapshot(accountId: number): Snapshot | undefined {
    const entry = this.entries.get(accountId);
    if (entry === undefined || entry.changed !== undefined) return undefined;
    this.options.metrics?.cacheHit("snapshot");
    this.touch(accountId, entry);
    return entry.snapshot;
  }

  /**
   * The snapshot of one stored model of the account (published or not), already in memory: the published
   * snapshot when `modelId` is the one it was built from. Never loads.
   */
  peekModelSnapshot(accountId: number, modelId: number): Snapshot | undefined {
    const published = this.entries.get(accountId);
    if (published !== undefined && published.snapshot.modelId === modelId)
      return this.peekSnapshot(accountId);
    const key = modelKey(modelId);
    const entry = this.entries.get(key);
    if (entry === undefined || entry.snapshot.accountId !== accountId || entry.changed !== undefined) {
      return undefined;
    }
    this.touch(key, entry);
    return entry.snapshot;
  }

  /**
   * The snapshot of one stored model of the account, loaded on first use within the snapshot budget;
   * undefined when the account has no such model or its artifact is no longer stored (the caller serves the
   * published model then).
   */
  async getModelSnapshot(accountId: number, modelId: number): Promise<Snapshot | undefined> {
    await this.entries.get(modelKey(modelId))?.changed;
    const loaded = this.peekModelSnapshot(accountId, modelId);
    if (loaded !== undefined) return loaded;
    const published = await this.getSnapshot(accountId);
    if (published?.modelId === modelId) return published;
    const absentSince = this.modelAbsent.get(modelId);
    if (absentSince !== undefined && Date.now() - absentSince < (this.options.absentTtlMs ?? 30_000)) {
      return undefined;
    }
    let pending = this.modelLoads.get(modelId);
    if (pending === undefined) {
      const promise = this.loadStoredModel(accountId, modelId)
        .catch((error: unknown) => {
          this.options.logger.error("snapshot load failed", { accountId, modelId, error });
          this.modelAbsent.set(modelId, Date.now());
          return undefined;
        })
        .finally(() => {
          if (this.modelLoads.get(modelId) === promise) this.modelLoads.delete(modelId);
        });
      this.modelLoads.set(modelId, promise);
      pending = promise;
    }
    return pending;
  }

  /** The account's snapshot, loading it from its published model on first use; undefined when it has none. */
  async getSnapshot(accountId: number): Promise<Snapshot | undefined> {
    await this.entries.get(accountId)?.changed;
    const loaded = this.peekSnapshot(accountId);
    if (loaded !== undefined) return loaded;
    this.options.metrics?.cacheMiss("snapshot");
    const absentSince = this.absent.get(accountId);
    if (absentSince !== undefined && Date.now() - absentSince < (this.options.absentTtlMs ?? 30_000)) {
      return undefined;
    }
    return this.load(accountId, undefined);
  }

  /**
   * Erasure hook: the user leaves the snapshot's user map, here and in any snapshot still loading. The engine
   * model keeps no per-user vectors (users are folded in from their history at request time), so the map
   * is the only per-user state a snapshot has. The next training forgets the user entirely.
   */
  evictEndUser(accountId: number, externalUserId: string): void {
    const now = Date.now();
    const recent = this.erasures.get(accountId) ?? new Map<string, number>();
    this.erasures.set(accountId, recent);
    recent.set(externalUserId, now);
    for (const [id, at] of recent) if (now - at > ERASURE_MEMORY_MS) recent.delete(id);
    const entry = this.entries.get(accountId);
    if (entry !== undefined) forgetUser(entry.snapshot, externalUserId);
    for (const [, other] of this.entries.otherModels(accountId)) forgetUser(other.snapshot, externalUserId);
  }

  /**
   * In-process catalogue hook: flags a deleted product at once and takes the other changes in at once, so
   * that a request following the write that made them is answered over the catalogue the write left (requests
   * arriving meanwhile wait for it). Changes made by other processes are taken in by the periodic refresh.
   */
  productsChanged(accountId: number, deletedExternalIds: readonly string[] = []): void {
    const published = this.entries.get(accountId);
    const entries = [...this.entries.otherModels(accountId)].map(([, other]) => other);
    if (published !== undefined) entries.push(published);
    for (const entry of entries) {
      flagChanged(entry, deletedExternalIds);
      const changed = this.refreshAfter(entry).finally(() => {
        if (entry.changed === changed) entry.changed = undefined;
      });
      entry.changed = changed;
    }
  }

  /** A refresh that starts after the one under way, if any (that one may have read before the change). */
  private async refreshAfter(entry: SnapshotEntry): Promise<void> {
    while (entry.refreshing !== undefined) await entry.refreshing;
    if (!this.stopped) await this.refresh(entry);
  }

  /** Drops an account's snapshot (its models were deleted). */
  drop(accountId: number): void {
    this.entries.removeAccount(accountId);
    this.absent.delete(accountId);
  }

  stats(): { snapshots: number; bytes: number; maxBytes: number } {
    return this.entries.stats();
  }

  /**
   * Called for every publication (NOTIFY from any process, or directly by the training job here). Accounts
   * this process serves get the new snapshot loaded in the background and swapped in; others load lazily.
   */
  async onModelPublished(event: ModelPublishedEvent): Promise<void> {
    if (event.modelId === null) {
      this.drop(event.accountId);
      return;
    }
    const current = this.entries.get(event.accountId);
    const served = current !== undefined || this.absent.has(event.accountId);
    this.absent.delete(event.accountId);
    if (!served || (current !== undefined && current.snapshot.modelId >= event.modelId)) return;
    if (this.loadingModel.get(event.accountId) === event.modelId) return;
    await this.load(event.accountId, event.modelId);
  }

  private load(accountId: number, modelId: number | undefined): Promise<Snapshot | undefined> {
    const pending = this.loading.get(accountId);
    // A load already under way for the account is reused unless a newer model was announced meanwhile.
    if (pending !== undefined && modelId === undefined) return pending;
    const promise = this.loadModel(accountId, modelId)
      .catch((error: unknown) => {
        this.options.logger.error("snapshot load failed", { accountId, modelId, error });
        // Serving falls back to the no-model path; retry after the absent TTL, not on every request.
        if (!this.entries.has(accountId)) this.absent.set(accountId, Date.now());
        return this.entries.get(accountId)?.snapshot;
      })
      .finally(() => {
        if (this.loading.get(accountId) === promise) {
          this.loading.delete(accountId);
          this.loadingModel.delete(accountId);
        }
      });
    this.loading.set(accountId, promise);
    if (modelId === undefined) this.loadingModel.delete(accountId);
    else this.loadingModel.set(accountId, modelId);
    return promise;
  }

  private async loadModel(accountId: number, modelId: number | undefined): Promise<Snapshot | undefined> {
    const startedAt = Date.now();
    const filters = [eq(models.accountId, accountId), eq(models.isPublished, true)];
    if (modelId !== undefined) filters.push(eq(models.id, modelId));
    const row = await this.modelRow(and(...filters));
    if (row === undefined) {
      if (!this.entries.has(accountId)) this.absent.set(accountId, Date.now());
      return this.entries.get(accountId)?.snapshot;
    }
    const built = await buildSnapshot(this.options.database, row, this.artifacts);
    if (this.stopped) return built.snapshot;
    const current = this.entries.get(accountId);
    if (current !== undefined && current.snapshot.modelId > built.snapshot.modelId) return current.snapshot;
    this.forgetRecentErasures(built.snapshot, startedAt);
    this.entries.install(accountId, {
      snapshot: built.snapshot,
      watermark: built.productsWatermark,
      checkedAt: Date.now(),
      refreshing: undefined,
    });
    this.absent.delete(accountId);
    // No forced collection here: the artifact's bytes never reached this thread (a worker decoded them), and
    // a full collection of a large heap would hold every request for tens to hundreds of ms.
    this.options.logger.info("snapshot loaded", {
      accountId,
      modelId: row.id,
      bytes: built.snapshot.bytes(),
      ms: Date.now() - startedAt,
    });
    return built.snapshot;
  }

  /** Loads a stored model of the account other than the published one (see `getModelSnapshot`). */
  private async loadStoredModel(accountId: number, modelId: number): Promise<Snapshot | undefined> {
    const startedAt = Date.now();
    const row = await this.modelRow(and(eq(models.accountId, accountId), eq(models.id, modelId)));
    if (row === undefined) {
      this.modelAbsent.set(modelId, Date.now());
      return undefined;
    }
    const built = await buildSnapshot(this.options.database, row, this.artifacts);
    if (this.stopped) return built.snapshot;
    // Published meanwhile: the account's own entry serves it.
    const published = this.entries.get(accountId);
    if (published?.snapshot.modelId === modelId) return published.snapshot;
    this.forgetRecentErasures(built.snapshot, startedAt);
    this.entries.install(modelKey(modelId), {
      snapshot: built.snapshot,
      watermark: built.productsWatermark,
      checkedAt: Date.now(),
      refreshing: undefined,
    });
    this.modelAbsent.delete(modelId);
    this.options.logger.info("snapshot loaded", {
      accountId,
      modelId,
      published: false,
      bytes: built.snapshot.bytes(),
      ms: Date.now() - startedAt,
    });
    return built.snapshot;
  }

  private async modelRow(where: ReturnType<typeof and>) {
    const [row] = await this.options.database.db
      .select({
        id: models.id,
        accountId: models.accountId,
        version: models.version,
        algorithm: models.algorithm,
        createdAt: models.createdAt,
        artifactBytes: models.artifactBytes,
      })
      .from(models)
      .where(where)
      .orderBy(desc(models.id))
      .limit(1);
    return row;
  }

  /** Erasures that may have raced with a load are applied to the snapshot it built. */
  private forgetRecentErasures(snapshot: Snapshot, startedAt: number): void {
    for (const [externalId, at] of this.erasures.get(snapshot.accountId) ?? []) {
      if (at >= startedAt - 1000) forgetUser(snapshot, externalId);
    }
  }

  /** An entry was used: it becomes the most recently used, and its catalogue is refreshed when due. */
  private touch(key: EntryKey, entry: SnapshotEntry): void {
    this.entries.touch(key, entry);
    const due = Date.now() - entry.checkedAt >= (this.options.productRefreshMs ?? 5000);
    if (due && entry.refreshing === undefined && !this.stopped) void this.refresh(entry);
  }

  private refresh(entry: SnapshotEntry): Promise<void> {
    const refreshing = (async () => {
      try {
        entry.watermark = await refreshProducts(this.options.database, entry.snapshot, entry.watermark);
        entry.checkedAt = Date.now();
      } catch (error) {
        if (!this.stopped) this.options.logger.warn("snapshot product refresh failed", { error });
      } finally {
        entry.refreshing = undefined;
      }
    })();
    entry.refreshing = refreshing;
    return refreshing;
  }
}

/** Flags deleted products at once. */
function flagChanged(entry: SnapshotEntry, deletedExternalIds: readonly string[]): void {
  for (const externalId of deletedExternalIds) {
    const i = entry.snapshot.items.indexByExternalId.get(externalId);
    if (i !== undefined) entry.snapshot.items.deleted[i] = 1;
  }
  if (deletedExternalIds.length > 0) bumpItemsRevision(entry.snapshot);
}

function forgetUser(snapshot: Snapshot, externalUserId: string): void {
  snapshot.users.indexByExternalId.delete(externalUserId);
}
