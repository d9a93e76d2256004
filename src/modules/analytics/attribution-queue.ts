/**
 * Credits clicks, carts and purchases to the recommendation answer that showed the product: the answer named
 * by the interaction's `recommendation_id` (it must have shown the product, and have been for this end user or
 * for nobody in particular), else the latest answer that showed the product to this end user within the 24
 * hours before the interaction. Other interaction types are not credited.
 *
 * This runs off the request path, like the recommendation log it reads: interactions are queued as they are
 * recorded (single creates and bulk chunks alike, in the process that wrote them) and credited in one
 * statement a second, right after this process's log queue has written what it served, so an answer clicked
 * a moment after it was shown is found. An interaction whose answer is not there yet (served by another
 * process whose log write is still pending) is tried again on later flushes for RETRY_FOR_MS. What is queued
 * when the process dies is not credited; the interactions themselves are stored either way.
 *
 * Like the log queue, a write credits only end users that still exist, under the recommendation-log lock
 * (db/recommendation-log-lock.ts): no attribution outlives its end user. The same statement adds what it
 * credited to the daily metrics (recommendation_daily_metrics).
 */
import { sql } from "drizzle-orm";
import type { AppEvents } from "../../app-events";
import type { Database } from "../../db/client";
import { numberArray, textArray } from "../../db/pg-array";
import { writeUnderRecommendationLogLock } from "../../db/recommendation-log-lock";
import type { Logger } from "../../shared/logger";
import type { InteractionsRecorded } from "../interactions/events";

/** Interaction types an answer is credited with. */
export const ATTRIBUTED_TYPES: ReadonlySet<string> = new Set(["CLICK", "CART", "PURCHASE"]);

/** How long before an interaction an answer may have shown the product. */
export const ATTRIBUTION_WINDOW_MS = 24 * 60 * 60 * 1000;
/** An answer is logged when its process flushes (within about a second): it may follow the click slightly. */
const LOG_LAG_SECONDS = 10;
const FLUSH_INTERVAL_MS = 1000;
/** How long an interaction waits for its answer to be logged by another process. */
const RETRY_FOR_MS = 10_000;
const MAX_BATCH = 5000;
const MAX_QUEUED = 50_000;

/**
 * What a set of attribution rows adds to the daily metrics, as select-list items over `interaction_type` and
 * `revenue` (also what erasing them subtracts: the same expression, so the sums cancel exactly).
 */
export const ATTRIBUTION_SUMS = sql.raw(`count(*) filter (where interaction_type = 'CLICK'),
  count(*) filter (where interaction_type = 'CART'),
  count(*) filter (where interaction_type = 'PURCHASE'),
  coalesce(sum(revenue::numeric), 0), coalesce(sum(revenue::numeric * revenue::numeric), 0)`);

interface PendingAttribution {
  accountId: number;
  endUserId: number;
  productId: number;
  externalProductId: string;
  type: string;
  revenue: number;
  occurredAt: Date;
  recommendationId: string | null;
  /** When it was queued; it is given up RETRY_FOR_MS later. */
  queuedAt: number;
}

export interface LogFlusher {
  flush(): Promise<void>;
}

export class AttributionQueue {
  private queue: PendingAttribution[] = [];
  private timer: ReturnType<typeof setInterval> | undefined;
  private flushing: Promise<void> | undefined;
  private dropped = 0;
  private unsubscribe: (() => void)[] = [];

  constructor(
    private readonly database: Database,
    private readonly logs: LogFlusher,
    private readonly logger: Logger,
    private readonly events: Pick<AppEvents, "interactionsRecorded" | "endUserErased">,
    private readonly now: () => number = Date.now,
  ) {}

  /** Queues the creditable interactions of a committed write. */
  recorded(event: InteractionsRecorded): void {
    const now = this.now();
    for (const interaction of event.interactions) {
      if (!ATTRIBUTED_TYPES.has(interaction.interactionType)) continue;
      // History sent in bulk long after the fact: no answer of the last day can have shown it (an explicit
      // recommendation id still counts).
      if (
        interaction.recommendationId === undefined &&
        interaction.occurredAt.getTime() < now - ATTRIBUTION_WINDOW_MS
      ) {
        continue;
      }
      this.queue.push({
        accountId: event.accountId,
        endUserId: event.endUserId,
        productId: interaction.productId,
        externalProductId: interaction.externalProductId,
        type: interaction.interactionType,
        revenue: interaction.revenue,
        occurredAt: interaction.occurredAt,
        recommendationId: interaction.recommendationId ?? null,
        queuedAt: now,
      });
    }
    if (this.queue.length > MAX_QUEUED) {
      const excess = this.queue.length - MAX_QUEUED;
      this.queue.splice(0, excess);
      this.dropped += excess;
    }
  }

  /** Forget queued interactions of an erased end user. */
  dropEndUser(accountId: number, endUserId: number): void {
    this.queue = this.queue.filter((e) => e.accountId !== accountId || e.endUserId !== endUserId);
  }

  dropAccount(accountId: number): void {
    this.queue = this.queue.filter((e) => e.accountId !== accountId);
  }

  get pending(): number {
    return this.queue.length;
  }

  start(): void {
    if (this.timer !== undefined) return;
    this.unsubscribe.push(
      this.events.interactionsRecorded.on((event) => this.recorded(event)),
      this.events.endUserErased.on((event) => this.dropEndUser(event.accountId, event.endUserId)),
    );
    this.timer = setInterval(() => void this.flush(), FLUSH_INTERVAL_MS);
    (this.timer as { unref?: () => void }).unref?.();
  }

  async stop(): Promise<void> {
    for (const off of this.unsubscribe) off();
    this.unsubscribe = [];
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
    await this.flush();
  }

  /**
   * Writes this process's pending recommendation logs, then credits what can be credited; the rest waits for
   * the next flush until it is too old. One flush at a time.
   */
  async flush(): Promise<void> {
    while (this.flushing !== undefined) await this.flushing;
    // With nothing to credit the logs are still written: a caller reading the experiment results right after
    // (as a shop's test run does) must find every answer it was sent counted as an impression.
    if (this.queue.length === 0) return this.logs.flush();
    this.flushing = this.run().finally(() => {
      this.flushing = undefined;
    });
    await this.flushing;
  }

  private async run(): Promise<void> {
    await this.logs.flush();
    const batch = this.queue.splice(0, MAX_BATCH);
    if (this.dropped > 0) {
      this.logger.warn("attribution queue overflowed; oldest interactions not credited", {
        dropped: this.dropped,
      });
      this.dropped = 0;
    }
    let settled: ReadonlySet<number>;
    try {
      settled = await this.write(batch);
    } catch (error) {
      // Nothing of the batch was written (one transaction): it is tried again while young enough.
      this.logger.error("attribution flush failed", { entries: batch.length, error });
      settled = new Set();
    }
    const expiry = this.now() - RETRY_FOR_MS;
    const retry = batch.filter((e, n) => !settled.has(n) && e.queuedAt > expiry);
    if (retry.length > 0) this.queue.unshift(...retry);
  }

  /** Credits the batch; returns the positions (in the batch) of the interactions whose answer was found. */
  private async write(batch: readonly PendingAttribution[]): Promise<ReadonlySet<number>> {
    const credit = sql`
        with pending as materialized (
          select p.*
          from unnest(
            ${numberArray(batch.map((e) => e.accountId))}::int[],
            ${numberArray(batch.map((e) => e.endUserId))}::bigint[],
            ${numberArray(batch.map((e) => e.productId))}::bigint[],
            ${textArray(batch.map((e) => e.externalProductId))}::text[],
            ${textArray(batch.map((e) => e.type))}::text[],
            ${numberArray(batch.map((e) => e.revenue))}::float8[],
            ${textArray(batch.map((e) => e.occurredAt.toISOString()))}::timestamptz[],
            ${textArray(batch.map((e) => e.recommendationId))}::uuid[]
          ) with ordinality as p(a, u, product_id, ext, type, revenue, at, rid, n)
          where (select eu.account_id from end_users eu where eu.id = p.u) = p.a
        ),
        shown as materialized (
          select p.*, l.recommendation_id as shown_id, l.endpoint, l.strategy, l.model_variant, l.experiment_id,
                 l.experiment_arm, l.created_at as shown_at,
                 (select e.ord - 1 from json_array_elements_text(l.items::json) with ordinality as e(x, ord)
                  where e.x = p.ext limit 1) as position
          from pending p
          cross join lateral (
            select c.* from (
              (select l.* from recommendation_logs l
               where p.rid is not null and l.end_user_id = p.u and l.account_id = p.a and l.recommendation_id = p.rid
               limit 1)
              union all
              (select l.* from recommendation_logs l
               where p.rid is not null and l.end_user_id is null and l.account_id = p.a
                 and l.recommendation_id = p.rid
               limit 1)
              union all
              (select l.* from recommendation_logs l
               where p.rid is null and l.end_user_id = p.u and l.account_id = p.a
                 and l.created_at > p.at - interval '24 hours'
                 and l.created_at <= p.at + make_interval(secs => ${LOG_LAG_SECONDS})
                 and strpos(l.items, to_json(p.ext)::text) > 0
               order by l.created_at desc, l.id desc
               limit 1)
            ) as c
            limit 1
          ) as l
        ),
        written as (
          insert into recommendation_attributions
            (account_id, end_user_id, recommendation_id, product_id, position, interaction_type, revenue,
             endpoint, strategy, model_variant, experiment_id, experiment_arm, shown_at, occurred_at)
          select s.a, s.u, s.shown_id, s.product_id, s.position, s.type, s.revenue, s.endpoint, s.strategy,
                 s.model_variant, s.experiment_id, s.experiment_arm, s.shown_at, s.at
          from shown s
          where s.position is not null
          on conflict (recommendation_id, product_id, interaction_type) where interaction_type <> 'PURCHASE'
          do nothing
          returning account_id, endpoint, strategy, model_variant, experiment_id, experiment_arm, shown_at,
                    interaction_type, revenue
        ),
        counted as (
          insert into recommendation_daily_metrics as d
            (account_id, day, endpoint, strategy, model_variant, experiment_id, experiment_arm, clicks, carts,
             purchases, revenue, revenue_sq)
          select w.account_id, (w.shown_at at time zone 'UTC')::date, w.endpoint, coalesce(w.strategy, ''),
                 coalesce(w.model_variant, ''), coalesce(w.experiment_id, 0), coalesce(w.experiment_arm, ''),
                 ${ATTRIBUTION_SUMS}
          from written w
          group by 1, 2, 3, 4, 5, 6, 7
          -- In key order, as the log writer updates them: two writers never wait on each other in a cycle.
          order by 1, 2, 3, 4, 5, 6, 7
          on conflict on constraint recommendation_daily_metrics_pkey do update set
            clicks = d.clicks + excluded.clicks, carts = d.carts + excluded.carts,
            purchases = d.purchases + excluded.purchases, revenue = d.revenue + excluded.revenue,
            revenue_sq = d.revenue_sq + excluded.revenue_sq
        )
        select s.n from shown s`;
    const rows = await writeUnderRecommendationLogLock<{ n: number | string }>(
      this.database,
      batch.map((e) => e.accountId),
      credit,
    );
    // Found answers are settled whether or not they showed the product (then there is nothing to credit).
    return new Set(rows.map((r) => Number(r.n) - 1));
  }
}
