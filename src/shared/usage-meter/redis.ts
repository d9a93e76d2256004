import type { RedisClient } from "bun";
import type { Database } from "../../db/client";
import type { Logger } from "../logger";
import { RedisCircuit } from "../rate-limit/circuit";
import { emptyCounts, USAGE_FIELDS, type UsageCounts, type UsageMeter, type UsageRow, utcDay } from "./types";
import { writeUsageRows } from "./write-rows";

/** Reads a counter hash and deletes it in one step, so no increment is flushed twice or lost. */
const TAKE_SCRIPT = `
local v = redis.call('HGETALL', KEYS[1])
redis.call('DEL', KEYS[1])
return v
`;

const TAKE_BATCH = 500;

/**
 * Counters shared by every process: a hash per (account, day) plus a set naming the hashes with unflushed
 * counts. Any process may flush; each hash is taken atomically, so processes never flush the same counts.
 * While Redis cannot be reached, counts are held in this process and written straight to the database by
 * the next flush (the outage logged once, see RedisCircuit), so none is lost and nothing logs per request.
 */
export class RedisUsageMeter implements UsageMeter {
  readonly kind = "redis" as const;
  private timer: ReturnType<typeof setInterval> | undefined;
  private readonly dirtyKey: string;
  private readonly circuit: RedisCircuit;
  private readonly held = new Map<string, UsageRow>();

  constructor(
    private readonly client: RedisClient,
    private readonly database: Database,
    private readonly logger: Logger,
    private readonly prefix = "rs:usage:",
    private readonly flushIntervalMs = 5_000,
  ) {
    this.dirtyKey = `${prefix}dirty`;
    this.circuit = new RedisCircuit(client, logger, "usage counters");
  }

  record(accountId: number, counts: Partial<UsageCounts>, at?: Date): void {
    const day = utcDay(at);
    void this.circuit.run(
      () => this.add(accountId, day, counts),
      () => this.hold(accountId, day, counts),
    );
  }

  async flush(): Promise<number> {
    let written = await this.flushHeld();
    if (this.circuit.down) return written;
    for (;;) {
      const members = (await this.client.send("SPOP", [this.dirtyKey, String(TAKE_BATCH)])) as
        | string[]
        | null;
      if (members === null || members.length === 0) return written;
      const rows: UsageRow[] = [];
      for (const member of members) {
        const [account, day] = member.split("|");
        const flat = (await this.client.send("EVAL", [TAKE_SCRIPT, "1", this.hashKey(member)])) as string[];
        const row: UsageRow = { accountId: Number(account), day: day!, ...emptyCounts() };
        for (let i = 0; i + 1 < flat.length; i += 2) {
          const field = flat[i] as keyof UsageCounts;
          if ((USAGE_FIELDS as readonly string[]).includes(field)) row[field] = Number(flat[i + 1]);
        }
        if (USAGE_FIELDS.some((field) => row[field] !== 0)) rows.push(row);
      }
      try {
        await writeUsageRows(this.database, rows);
      } catch (error) {
        // Put the counts back so the next flush (here or in another process) retries them.
        await Promise.all(rows.map((row) => this.add(row.accountId, row.day, row)));
        throw error;
      }
      written += rows.length;
    }
  }

  start(): void {
    this.timer ??= setInterval(() => {
      this.flush().catch((error: unknown) => this.logger.warn("usage flush failed", { error }));
    }, this.flushIntervalMs);
    this.timer.unref?.();
  }

  async stop(): Promise<void> {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
    await this.flush();
  }

  private hold(accountId: number, day: string, counts: Partial<UsageCounts>): void {
    const key = `${accountId}|${day}`;
    const row = this.held.get(key) ?? { accountId, day, ...emptyCounts() };
    for (const field of USAGE_FIELDS) row[field] += counts[field] ?? 0;
    this.held.set(key, row);
  }

  /** Counts held during a Redis outage, added to the database directly. */
  private async flushHeld(): Promise<number> {
    if (this.held.size === 0) return 0;
    const rows = [...this.held.values()];
    this.held.clear();
    try {
      await writeUsageRows(this.database, rows);
    } catch (error) {
      for (const row of rows) this.hold(row.accountId, row.day, row);
      throw error;
    }
    return rows.length;
  }

  private hashKey(member: string): string {
    return `${this.prefix}c:${member}`;
  }

  private async add(accountId: number, day: string, counts: Partial<UsageCounts>): Promise<void> {
    const member = `${accountId}|${day}`;
    const key = this.hashKey(member);
    const updates: Promise<unknown>[] = [];
    for (const field of USAGE_FIELDS) {
      const amount = counts[field] ?? 0;
      if (amount !== 0) updates.push(this.client.hincrby(key, field, amount));
    }
    if (updates.length === 0) return;
    // The increments are sent before the set entry, so a flusher that sees the entry also sees the counts.
    updates.push(this.client.sadd(this.dirtyKey, member));
    await Promise.all(updates);
  }
}
