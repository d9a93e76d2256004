import type { Database } from "../../db/client";
import type { Logger } from "../logger";
import { emptyCounts, USAGE_FIELDS, type UsageCounts, type UsageMeter, type UsageRow, utcDay } from "./types";
import { writeUsageRows } from "./write-rows";

/** Counts in this process's memory; a failed flush puts the counts back for the next attempt. */
export class MemoryUsageMeter implements UsageMeter {
  readonly kind = "memory" as const;
  private pending = new Map<string, UsageRow>();
  private timer: ReturnType<typeof setInterval> | undefined;
  private flushing: Promise<number> | undefined;

  constructor(
    private readonly database: Database,
    private readonly logger: Logger,
    private readonly flushIntervalMs = 5_000,
  ) {}

  record(accountId: number, counts: Partial<UsageCounts>, at?: Date): void {
    const day = utcDay(at);
    const key = `${accountId}|${day}`;
    let row = this.pending.get(key);
    if (row === undefined) {
      row = { accountId, day, ...emptyCounts() };
      this.pending.set(key, row);
    }
    for (const field of USAGE_FIELDS) row[field] += counts[field] ?? 0;
  }

  async flush(): Promise<number> {
    // One flush at a time; a caller arriving mid-flush waits for it and then writes what came after.
    while (this.flushing !== undefined) await this.flushing;
    if (this.pending.size === 0) return 0;
    const rows = [...this.pending.values()];
    this.pending = new Map();
    this.flushing = writeUsageRows(this.database, rows)
      .then(() => rows.length)
      .catch((error: unknown) => {
        for (const row of rows) this.record(row.accountId, row, new Date(`${row.day}T12:00:00Z`));
        throw error;
      })
      .finally(() => {
        this.flushing = undefined;
      });
    return this.flushing;
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
}
