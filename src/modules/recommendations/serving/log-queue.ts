/**
 * Recommendation logs ("what was shown to whom", for the end user's export and erasure) are written off the
 * hot path: responses enqueue, a timer flushes every second (or sooner when the queue fills) in one
 * INSERT. The table has no foreign key (see the schema), so the INSERT keeps only entries of end
 * users that still exist, and it runs under the recommendation-log lock (db/recommendation-log-lock.ts): an
 * erasure either waits for a write under way and then deletes its rows, or is committed before the write
 * looks, so it can neither lose the other users' logs nor resurrect the erased user's data.
 */
import { sql } from "drizzle-orm";
import type { Database } from "../../../db/client";
import { numberArray, textArray } from "../../../db/pg-array";
import { writeUnderRecommendationLogLock } from "../../../db/recommendation-log-lock";
import { attached } from "../../../shared/attached";
import type { Logger } from "../../../shared/logger";

export interface RecommendationLogEntry {
  accountId: number;
  /** null: an answer for nobody in particular (similar products, category listings). */
  endUserId: number | null;
  /** The answer's `recommendationId` (a UUID). */
  recommendationId: string;
  /** What served the answer: endpoint, strategy, model variant and experiment arm (see `AnswerLabels`). */
  labels: AnswerLabels;
  items: readonly string[];
}

/**
 * How an answer is grouped in online metrics. Answers of one endpoint share a handful of these, and a
 * caller hands the same object for the same grouping, so a batch numbers them once each (see `batchLines`).
 */
export interface AnswerLabels {
  endpoint: string;
  strategy: string | null;
  modelVariant: string | null;
  experimentId: number | null;
  experimentArm: string | null;
}

const FLUSH_INTERVAL_MS = 1000;
/**
 * A write costs a few round trips and statements whatever its size: at 500 entries that was about 0.6 µs of
 * this process's CPU per entry on top of the entry's own 0.8 µs. The lock it holds is held for a few
 * milliseconds longer, which only an erasure racing it waits for.
 */
const FLUSH_AT = 2000;
/**
 * On the embedded store the INSERT holds the database's thread, about 13 µs an entry, and every statement
 * waits behind it: 2,000 entries held every request for 25-45 ms, the p99 of a busy process (when that thread
 * was the one answering requests). A few hundred keep each write to a few milliseconds, for about half a
 * millisecond more per write.
 */
export const EMBEDDED_FLUSH_AT = 200;
/** Beyond this the oldest entries are dropped (and counted) rather than growing memory without bound. */
const MAX_QUEUED = 50_000;

export class RecommendationLogQueue {
  private queue: RecommendationLogEntry[] = [];
  private timer: ReturnType<typeof setInterval> | undefined;
  private flushing: Promise<void> | undefined;
  private dropped = 0;

  /** Entries that start a write before the timer does (FLUSH_AT unless given). */
  private readonly flushAt: number;

  constructor(
    private readonly database: Database,
    private readonly logger: Logger,
    options: { flushAt?: number } = {},
  ) {
    this.flushAt = options.flushAt ?? FLUSH_AT;
  }

  enqueue(entry: RecommendationLogEntry): void {
    this.queue.push(entry);
    if (this.queue.length > MAX_QUEUED) {
      this.queue.shift();
      this.dropped++;
    }
    // One write at a time: while one is under way, later entries wait for it (see `flush`) instead of each
    // request queueing another waiter.
    if (this.queue.length >= this.flushAt && this.flushing === undefined) void this.flush();
  }

  /** Forget queued logs of an erased end user. */
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
    this.timer = setInterval(() => void this.flush(), FLUSH_INTERVAL_MS);
    // The timer must not keep a finished process (or test run) alive.
    (this.timer as { unref?: () => void }).unref?.();
  }

  async stop(): Promise<void> {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
    await this.flush();
  }

  /** Writes everything queued so far; concurrent calls share one write at a time. */
  async flush(): Promise<void> {
    while (this.flushing !== undefined) await this.flushing;
    if (this.queue.length === 0) return;
    const batch = this.queue;
    this.queue = [];
    this.flushing = this.write(batch).finally(() => {
      this.flushing = undefined;
      if (this.timer !== undefined && this.queue.length >= this.flushAt) void this.flush();
    });
    await this.flushing;
  }

  private async write(batch: RecommendationLogEntry[]): Promise<void> {
    if (this.dropped > 0) {
      this.logger.warn("recommendation log queue overflowed; oldest entries dropped", {
        dropped: this.dropped,
      });
      this.dropped = 0;
    }
    const { lines, labels, endUsers } = batchLines(batch);
    // Which end users still exist is looked up once per end user of the batch, not once per entry: one scan
    // of the primary key for the batch's ids, which Postgres plans as an index scan for a few ids or thousands
    // (a scalar subquery per id cost the embedded store about a third more).
    // The day's impressions per grouping are added in the same statement, from the same rows.
    const insert = sql`
      with live as materialized (
        select eu.id, eu.account_id from end_users eu where eu.id = any(${numberArray(endUsers)}::bigint[])
      ),
      labels as (
        select * from unnest(${textArray(labels.endpoint)}::text[], ${textArray(labels.strategy)}::text[],
          ${textArray(labels.modelVariant)}::text[], ${textArray(labels.experimentId.map(nullableText))}::int[],
          ${textArray(labels.experimentArm)}::text[])
          with ordinality as l(endpoint, strategy, model_variant, experiment_id, experiment_arm, k)
      ),
      kept as materialized (
        select v.* from (
          select split_part(line, E'\\t', 1)::int as a, nullif(split_part(line, E'\\t', 2), '')::bigint as u,
                 split_part(line, E'\\t', 3)::int as k, split_part(line, E'\\t', 4)::uuid as r,
                 split_part(line, E'\\t', 5)::int as shown, split_part(line, E'\\t', 6) as i
          from string_to_table(${lines}::text, E'\\n') as line
        ) as v
        where v.u is null or (v.a, v.u) in (select live.account_id, live.id from live)
      ),
      logged as (
        insert into recommendation_logs
          (account_id, end_user_id, recommendation_id, endpoint, strategy, model_variant, experiment_id,
           experiment_arm, items)
        select v.a, v.u, v.r, l.endpoint, l.strategy, l.model_variant, l.experiment_id, l.experiment_arm, v.i
        from kept v join labels l on l.k = v.k
      )
      insert into recommendation_daily_metrics as d
        (account_id, day, endpoint, strategy, model_variant, experiment_id, experiment_arm, impressions)
      select v.a, (now() at time zone 'UTC')::date, l.endpoint, coalesce(l.strategy, ''),
             coalesce(l.model_variant, ''), coalesce(l.experiment_id, 0), coalesce(l.experiment_arm, ''),
             sum(v.shown)
      from kept v join labels l on l.k = v.k
      group by 1, 2, 3, 4, 5, 6, 7
      -- In key order, as the attribution writer updates them: two writers never wait on each other in a cycle.
      order by 1, 2, 3, 4, 5, 6, 7
      on conflict on constraint recommendation_daily_metrics_pkey
      do update set impressions = d.impressions + excluded.impressions`;
    try {
      await writeUnderRecommendationLogLock(
        this.database,
        batch.map((entry) => entry.accountId),
        insert,
      );
    } catch (error) {
      this.logger.error("recommendation log flush failed", { entries: batch.length, error });
    }
  }
}

/**
 * A batch travels as one text parameter, a line per entry (`account TAB end user (empty: none) TAB labels
 * number TAB recommendation id TAB number of items TAB items`), split by Postgres: far cheaper on both sides than a JSON document
 * of the batch. The items are a JSON array of the shown external ids, which JSON escapes so that no tab or
 * line break occurs in it; the answers' labels are numbered into small arrays of their own, a column each.
 *
 * A page served again from the page cache is logged with the very same item list each time: its JSON is
 * made once per list, and a batch is joined from those pieces rather than serialised whole.
 */
const nullableText = (value: number | null): string | null => (value === null ? null : String(value));

const listJson = attached<readonly string[], string>("item list JSON");

/**
 * The JSON text of an answer's item list, made once per list and kept on it. The page renderer asks for it as
 * it renders the page (respond.ts), while the ids are still in the processor's cache from the page's own
 * JSON: asked for first at the log's flush, a second later, a list of 20 took about 2 µs to serialise in a
 * busy process, against 0.35 µs for fresh copies of the same ids (counted under the one-category workload).
 */
export function itemListJson(items: readonly string[]): string {
  let json = listJson.get(items);
  if (json === undefined) {
    json = JSON.stringify(items);
    listJson.set(items, json);
  }
  return json;
}

interface LabelColumns {
  endpoint: string[];
  strategy: (string | null)[];
  modelVariant: (string | null)[];
  experimentId: (number | null)[];
  experimentArm: (string | null)[];
}

function batchLines(batch: readonly RecommendationLogEntry[]): {
  lines: string;
  labels: LabelColumns;
  endUsers: number[];
} {
  const labels: LabelColumns = {
    endpoint: [],
    strategy: [],
    modelVariant: [],
    experimentId: [],
    experimentArm: [],
  };
  const labelNumber = new Map<AnswerLabels, number>();
  const endUsers = new Set<number>();
  const lines: string[] = new Array(batch.length);
  for (let r = 0; r < batch.length; r++) {
    const entry = batch[r]!;
    const items = itemListJson(entry.items);
    let k = labelNumber.get(entry.labels);
    if (k === undefined) {
      labels.endpoint.push(entry.labels.endpoint);
      labels.strategy.push(entry.labels.strategy);
      labels.modelVariant.push(entry.labels.modelVariant);
      labels.experimentId.push(entry.labels.experimentId);
      labels.experimentArm.push(entry.labels.experimentArm);
      k = labels.endpoint.length; // Postgres arrays count from 1
      labelNumber.set(entry.labels, k);
    }
    if (entry.endUserId !== null) endUsers.add(entry.endUserId);
    lines[r] =
      `${entry.accountId}\t${entry.endUserId ?? ""}\t${k}\t${entry.recommendationId}\t${entry.items.length}\t${items}`;
  }
  return { lines: lines.join("\n"), labels, endUsers: [...endUsers] };
}
