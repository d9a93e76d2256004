export interface UsageCounts {
  requests: number;
  recommendations: number;
  ingestedRecords: number;
  trainings: number;
}

export const USAGE_FIELDS = ["requests", "recommendations", "ingestedRecords", "trainings"] as const;

export interface UsageRow extends UsageCounts {
  accountId: number;
  /** UTC day, YYYY-MM-DD. */
  day: string;
}

/**
 * Per-account, per-day counters. `record` is synchronous and cheap (a map update or a pipelined Redis
 * command); `flush` moves what was counted into usage_daily in one statement per batch.
 */
export interface UsageMeter {
  readonly kind: "memory" | "redis";
  record(accountId: number, counts: Partial<UsageCounts>, at?: Date): void;
  /** Writes everything counted so far; answers the number of (account, day) rows written. */
  flush(): Promise<number>;
  start(): void;
  /** Stops the timer and flushes what is left; call before the database closes. */
  stop(): Promise<void>;
}

let dayStart = 0;
let dayEnd = 0;
let dayName = "";

/**
 * The UTC day of `at` (a Date or epoch milliseconds, default now) as YYYY-MM-DD. Called per request: the
 * current day's name is reused.
 */
export function utcDay(at: Date | number = Date.now()): string {
  const t = typeof at === "number" ? at : at.getTime();
  if (t >= dayStart && t < dayEnd) return dayName;
  const name = new Date(t).toISOString().slice(0, 10);
  dayStart = Date.parse(`${name}T00:00:00Z`);
  dayEnd = dayStart + 86_400_000;
  dayName = name;
  return name;
}

export const emptyCounts = (): UsageCounts => ({
  requests: 0,
  recommendations: 0,
  ingestedRecords: 0,
  trainings: 0,
});
