/**
 * The recommender's long-lived state: per-user history cache, the no-model catalogue cache, the page cache
 * of computed answers and the batched recommendation log. Listens to catalogue, interaction and erasure
 * events so that a change is reflected by the very next answer in this process.
 */
import type { AppEvents } from "../../../app-events";
import type { Database } from "../../../db/client";
import { DEFAULT_TUNING, type ServingTuning } from "../../../engine/ranking/candidates";
import type { Logger } from "../../../shared/logger";
import type { Snapshot } from "../../../snapshots/types";
import { CatalogueExtras } from "./catalogue-extras";
import { CatalogueCache } from "./catalogue-loader";
import { EMBEDDED_STORE_TTL_MS, HistoryCache, SHARED_STORE_TTL_MS, type UserHistory } from "./history-cache";
import { HistorySync } from "./history-sync";
import { EMBEDDED_FLUSH_AT, RecommendationLogQueue } from "./log-queue";
import { PageCache } from "./page-cache";
import { snapshotView } from "./snapshot-signals";
import { carryCandidates } from "./user-memo";
import type { ServingView } from "./view";

export interface SnapshotSource {
  getSnapshot(accountId: number): Promise<Snapshot | undefined>;
  /** The snapshot already in memory, or undefined (never loads). */
  peekSnapshot(accountId: number): Snapshot | undefined;
  /** A stored model's snapshot (an experiment arm's pinned version), loading it on first use. */
  getModelSnapshot(accountId: number, modelId: number): Promise<Snapshot | undefined>;
  peekModelSnapshot(accountId: number, modelId: number): Snapshot | undefined;
}

/** What a request ranks over (see `servingState`). */
export interface ServingState {
  readonly view: ServingView;
  readonly history?: UserHistory;
}

export interface UserServingState extends ServingState {
  readonly history: UserHistory;
}

export class RecommendationService {
  readonly histories: HistoryCache;
  readonly catalogue: CatalogueCache;
  /** Products newer than the account's snapshot, for listings served from it. */
  readonly extras: CatalogueExtras;
  readonly logs: RecommendationLogQueue;
  /** Computed answers, served again while their inputs hold (see page-cache.ts). */
  readonly pages = new PageCache();
  readonly historySync: HistorySync;
  /** Candidate-path thresholds (see src/engine/ranking/candidates.ts). */
  readonly tuning: Readonly<ServingTuning>;
  private unsubscribe: (() => void)[] = [];

  constructor(
    private readonly database: Database,
    logger: Logger,
    private readonly snapshots: SnapshotSource | undefined,
    private readonly events: AppEvents,
    options: { tuning?: Readonly<ServingTuning> } = {},
  ) {
    this.tuning = options.tuning ?? DEFAULT_TUNING;
    // A history read names its products from the account's model when it is in memory.
    this.histories = new HistoryCache(
      database,
      Date.now,
      (accountId) => {
        const items = this.snapshots?.peekSnapshot(accountId)?.items;
        if (items === undefined) return undefined;
        return (productId) => {
          const index = items.indexByProductId.get(productId);
          return index === undefined ? undefined : items.externalIds[index];
        };
      },
      database.kind === "pglite"
        ? { preload: true, ttlMs: EMBEDDED_STORE_TTL_MS }
        : { ttlMs: SHARED_STORE_TTL_MS },
    );
    this.catalogue = new CatalogueCache(database);
    this.extras = new CatalogueExtras(database);
    this.logs = new RecommendationLogQueue(
      database,
      logger,
      database.kind === "pglite" ? { flushAt: EMBEDDED_FLUSH_AT } : {},
    );
    this.historySync = new HistorySync(database, this.histories, logger, database.kind !== "pglite");
  }

  /**
   * What a request ranks over, and the end user's history when one is named: at once when both are in memory
   * (the tenant's snapshot after its first request, a returning user), else a promise that loads them
   * together. Use cases answer a plain value without waiting a turn. `modelId` (an experiment arm's pinned
   * model) ranks with that stored model, or the published one when it cannot be loaded.
   */
  servingState(
    accountId: number,
    externalUserId?: undefined,
    modelId?: number,
  ): ServingState | Promise<ServingState>;
  servingState(
    accountId: number,
    externalUserId: string,
    modelId?: number,
  ): UserServingState | Promise<UserServingState>;
  servingState(
    accountId: number,
    externalUserId?: string,
    modelId?: number,
  ): ServingState | Promise<ServingState> {
    const view = this.viewNow(accountId, modelId);
    if (externalUserId === undefined) {
      return view !== undefined
        ? { view }
        : this.view(accountId, modelId).then((loaded) => ({ view: loaded }));
    }
    const history = view && this.histories.loaded(accountId, externalUserId);
    if (view !== undefined && history !== undefined) return { view, history };
    return Promise.all([this.view(accountId, modelId), this.histories.get(accountId, externalUserId)]).then(
      ([loaded, loadedHistory]) => ({ view: loaded, history: loadedHistory }),
    );
  }

  /**
   * What a request ranks over: the published model's snapshot, else the product rows. `modelId` (an
   * experiment arm's pinned model) ranks with that stored model instead, or the published one when it cannot
   * be loaded; the view's snapshot says which served.
   */
  async view(accountId: number, modelId?: number): Promise<ServingView> {
    const snapshot =
      (modelId === undefined ? undefined : await this.snapshots?.getModelSnapshot(accountId, modelId)) ??
      (await this.snapshots?.getSnapshot(accountId));
    if (snapshot !== undefined) {
      // The account's model just came into memory (or was waited for): its users' histories follow.
      this.histories.warm(accountId);
      return snapshotView(snapshot, this.database, this.tuning);
    }
    return { table: await this.catalogue.get(accountId), signals: null };
  }

  /**
   * The view without waiting when the account's published snapshot (or the pinned model's) is in memory
   * (every request after its first); undefined otherwise, and `view` then loads what is needed.
   */
  viewNow(accountId: number, modelId?: number): ServingView | undefined {
    const snapshot =
      modelId === undefined
        ? this.snapshots?.peekSnapshot(accountId)
        : this.snapshots?.peekModelSnapshot(accountId, modelId);
    return snapshot === undefined ? undefined : snapshotView(snapshot, this.database, this.tuning);
  }

  async start(): Promise<void> {
    this.unsubscribe.push(
      this.events.interactionsRecorded.on((event) => {
        const change = this.histories.recorded(
          event.accountId,
          event.externalUserId,
          event.endUserId,
          event.interactions,
        );
        // The next ranking starts from this user's previous candidates (see user-memo.ts).
        if (change !== undefined) carryCandidates(change.previous, change.updated);
        this.historySync.publish(event.accountId, event.externalUserId);
        // Popularity of the no-model table moved; the snapshot keeps its trained popularity until retraining.
        this.catalogue.invalidate(event.accountId);
      }),
      this.events.endUserErased.on((event) => {
        this.histories.invalidate(event.accountId, event.externalId);
        this.pages.dropEndUser(event.accountId, event.externalId);
        this.logs.dropEndUser(event.accountId, event.endUserId);
      }),
      this.events.endUserUpdated.on((event) => {
        // Preferences and price range shape the answers: read the profile again, here and elsewhere. The
        // user's cached pages were computed from the history dropped here, so none is served again (the
        // next read is a new object; see page-cache.ts) and they age out. Dropping them at once would scan
        // every cached page for each user, a thousand times over for a chunk of bulk-ingested users.
        this.histories.invalidate(event.accountId, event.externalId);
        this.historySync.publish(event.accountId, event.externalId);
      }),
      this.events.productsChanged.on((event) => {
        this.catalogue.invalidate(event.accountId);
        this.extras.invalidate(event.accountId);
      }),
    );
    this.logs.start();
    await this.historySync.start();
  }

  async stop(): Promise<void> {
    for (const off of this.unsubscribe) off();
    this.unsubscribe = [];
    await this.historySync.stop();
    await this.logs.stop();
    this.histories.clear();
    this.pages.clear();
    this.catalogue.clear();
    this.extras.clear();
  }

  /** Sandbox reset and similar whole-account deletions. */
  forgetAccount(accountId: number): void {
    this.histories.invalidateAccount(accountId);
    this.pages.dropAccount(accountId);
    this.catalogue.invalidate(accountId);
    this.extras.invalidate(accountId);
    this.logs.dropAccount(accountId);
  }
}
