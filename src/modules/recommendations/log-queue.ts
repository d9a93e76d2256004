/**
 * Recommendation logs ("what was shown to whom", for the end user's export and erasure) are written off the
 * hot path: responses enqueue, a timer flushes every second (or sooner when the queue fills) in one
 * multi-row INSERT. An end user erased after their entry was queued makes that INSERT fail on its foreign
 * key; the batch is then written again keeping only the users that still exist, so an erasure racing a flush
 * can neither lose the other users' logs nor resurrect the erased user's data.
 */
import { sql } from "drizzle-orm";
import type { Database } from "../../db/client";
import type { Logger } from "../../shared/logger";

export interface RecommendationLogEntry {
  accountId: number;
  endUserId: number;
  endpoint: string;
  items: readonly string[];
}

const FLUSH_INTERVAL_MS = 1000;
const FLUSH_AT = 500;
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
    const payload = batchJson(batch);
    try {
      try {
        // The foreign key already checks each end user; a batch naming one erased since it was queued fails
        // as a whole and is written again below, keeping only the users that still exist.
        await this.database.db.execute(sql`
          insert into recommendation_logs (account_id, end_user_id, endpoint, items)
          select v.a, v.u, v.e, v.i
          from jsonb_to_recordset(${payload}::jsonb) as v(a integer, u bigint, e text, i jsonb)`);
      } catch (error) {
        if (!isForeignKeyViolation(error)) throw error;
        await this.database.db.execute(sql`
          insert into recommendation_logs (account_id, end_user_id, endpoint, items)
          select v.a, v.u, v.e, v.i
          from jsonb_to_recordset(${payload}::jsonb) as v(a integer, u bigint, e text, i jsonb)
          where exists (select 1 from end_users eu where eu.id = v.u and eu.account_id = v.a)`);
      }
    } catch (error) {
      this.logger.error("recommendation log flush failed", { entries: batch.length, error });
    }
  }
}

/**
 * A page served again from the page cache is logged with the very same item list each time: its JSON is
 * made once per list (and per endpoint name), and a batch is joined from those pieces rather than
 * serialised whole, which would also hold the event loop for a large batch.
 */
const listJson = new WeakMap<readonly string[], string>();
const endpointJson = new Map<string, string>();

function batchJson(batch: readonly RecommendationLogEntry[]): string {
  const rows: string[] = new Array(batch.length);
  for (let r = 0; r < batch.length; r++) {
    const entry = batch[r]!;
    let items = listJson.get(entry.items);
    if (items === undefined) {
      items = JSON.stringify(entry.items);
      listJson.set(entry.items, items);
    }
    let endpoint = endpointJson.get(entry.endpoint);
    if (endpoint === undefined) {
      endpoint = JSON.stringify(entry.endpoint);
      if (endpointJson.size < 64) endpointJson.set(entry.endpoint, endpoint);
    }
    rows[r] = `{"a":${entry.accountId},"u":${entry.endUserId},"e":${endpoint},"i":${items}}`;
  }
  return `[${rows.join(",")}]`;
}

/** SQLSTATE 23503, as postgres.js and PGlite report it (drizzle may wrap the driver's error in `cause`). */
function isForeignKeyViolation(error: unknown): boolean {
  for (let e = error; e !== null && typeof e === "object"; e = (e as { cause?: unknown }).cause) {
    if ((e as { code?: unknown }).code === "23503") return true;
  }
  return false;
}
