/**
 * Recommendation logs ("what was shown to whom", for the end user's export and erasure) are written off the
 * hot path: responses enqueue, a timer flushes every second (or sooner when the queue fills) in one
 * INSERT. The table has no foreign key (see the schema), so the INSERT keeps only entries of end
 * users that still exist, and it runs under a per-account lock (shared among writers) that deleting end
 * users takes exclusively: an erasure either waits for a write under way and then deletes its rows, or is
 * committed before the write looks, so it can neither lose the other users' logs nor resurrect the erased
 * user's data.
 */
import { sql } from "drizzle-orm";
import type { Database } from "../../db/client";
import { numberArray, textArray } from "../../db/pg-array";
import type { Logger } from "../../shared/logger";

export interface RecommendationLogEntry {
  accountId: number;
  endUserId: number;
  endpoint: string;
  items: readonly string[];
}

const FLUSH_INTERVAL_MS = 1000;
/**
 * A write costs a few round trips and statements whatever its size: at 500 entries that was about 0.6 µs of
 * this process's CPU per entry on top of the entry's own 0.8 µs. The lock it holds is held for a few
 * milliseconds longer, which only an erasure racing it waits for.
 */
const FLUSH_AT = 2000;
/** Beyond this the oldest entries are dropped (and counted) rather than growing memory without bound. */
const MAX_QUEUED = 50_000;

export class RecommendationLogQueue {
  private queue: RecommendationLogEntry[] = [];
  private timer: ReturnType<typeof setInterval> | undefined;
  private flushing: Promise<void> | undefined;
  private dropped = 0;

  constructor(
    private readonly database: Database,
    private readonly logger: Logger,
  ) {}

  enqueue(entry: RecommendationLogEntry): void {
    this.queue.push(entry);
    if (this.queue.length > MAX_QUEUED) {
      this.queue.shift();
      this.dropped++;
    }
    // One write at a time: while one is under way, later entries wait for it (see `flush`) instead of each
    // request queueing another waiter.
    if (this.queue.length >= FLUSH_AT && this.flushing === undefined) void this.flush();
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
      if (this.timer !== undefined && this.queue.length >= FLUSH_AT) void this.flush();
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
    const { lines, endpoints, endUsers } = batchLines(batch);
    const accounts = [...new Set(batch.map((entry) => entry.accountId))].sort((a, b) => a - b);
    try {
      await this.database.db.transaction(async (tx) => {
        // A statement of its own, so the INSERT's snapshot is taken once the lock is held (see above). In
        // ascending account order, as the end users' delete trigger takes them.
        await tx.execute(sql`
          select pg_advisory_xact_lock_shared(hashtext('recommendation_logs'), a)
          from unnest(${numberArray(accounts)}::int[]) as a`);
        // Which end users still exist is looked up once per end user of the batch (a primary-key probe each,
        // as a scalar subquery so that the planner cannot turn it into a scan of every end user), not once
        // per entry.
        await tx.execute(sql`
          with live as materialized (
            select wanted.id, (select eu.account_id from end_users eu where eu.id = wanted.id) as account_id
            from unnest(${numberArray(endUsers)}::bigint[]) as wanted(id)
          )
          insert into recommendation_logs (account_id, end_user_id, endpoint, items)
          select v.a, v.u, (${textArray(endpoints)}::text[])[v.e], v.i
          from (
            select split_part(line, E'\\t', 1)::int as a, split_part(line, E'\\t', 2)::bigint as u,
                   split_part(line, E'\\t', 3)::int as e, split_part(line, E'\\t', 4) as i
            from string_to_table(${lines}::text, E'\\n') as line
          ) as v
          where (v.a, v.u) in (select live.account_id, live.id from live)`);
      });
    } catch (error) {
      this.logger.error("recommendation log flush failed", { entries: batch.length, error });
    }
  }
}

/**
 * A batch travels as one text parameter, a line per entry (`account TAB end user TAB endpoint number TAB
 * items`), split by Postgres: far cheaper on both sides than a JSON document of the batch. The items are a
 * JSON array of the shown external ids, which JSON escapes so that no tab or line break occurs in it; the
 * endpoints are numbered into a small array of their own.
 *
 * A page served again from the page cache is logged with the very same item list each time: its JSON is
 * made once per list, and a batch is joined from those pieces rather than serialised whole.
 */
const listJson = new WeakMap<readonly string[], string>();

function batchLines(batch: readonly RecommendationLogEntry[]): {
  lines: string;
  endpoints: string[];
  endUsers: number[];
} {
  const endpoints: string[] = [];
  const endpointNumber = new Map<string, number>();
  const endUsers = new Set<number>();
  const lines: string[] = new Array(batch.length);
  for (let r = 0; r < batch.length; r++) {
    const entry = batch[r]!;
    let items = listJson.get(entry.items);
    if (items === undefined) {
      items = JSON.stringify(entry.items);
      listJson.set(entry.items, items);
    }
    let endpoint = endpointNumber.get(entry.endpoint);
    if (endpoint === undefined) {
      endpoints.push(entry.endpoint);
      endpoint = endpoints.length; // Postgres arrays count from 1
      endpointNumber.set(entry.endpoint, endpoint);
    }
    endUsers.add(entry.endUserId);
    lines[r] = `${entry.accountId}\t${entry.endUserId}\t${endpoint}\t${items}`;
  }
  return { lines: lines.join("\n"), endpoints, endUsers: [...endUsers] };
}
