import { sql } from "drizzle-orm";
import type { Database } from "../../db/client";
import type { Logger } from "../../shared/logger";

/** A probe that has not answered by then counts as down: a vanished host makes connects hang, not fail. */
const PROBE_TIMEOUT_MS = 2000;

function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

export interface DatabaseHealth {
  state: "up" | "down" | "unknown";
  kind: Database["kind"];
  checkedAt: string | null;
  latencyMs: number | null;
}

/**
 * Probes the database in the background so GET /health answers from memory: it is the cheapest route and
 * the baseline that every other route's speed is measured against.
 */
export class HealthMonitor {
  private latest: DatabaseHealth;
  private timer: ReturnType<typeof setInterval> | undefined;
  private probing = false;

  constructor(
    private readonly database: Database,
    private readonly logger: Logger,
    private readonly intervalMs = 5000,
  ) {
    this.latest = { state: "unknown", kind: database.kind, checkedAt: null, latencyMs: null };
  }

  current(): DatabaseHealth {
    return this.latest;
  }

  /**
   * A request just failed to reach the database: report it down now rather than at the next probe (up to
   * `intervalMs` later), and probe at once so recovery is noticed as soon as the database answers again.
   */
  markUnreachable(): void {
    if (this.latest.state !== "down") {
      this.latest = { ...this.latest, state: "down", checkedAt: new Date().toISOString(), latencyMs: null };
    }
    if (this.timer !== undefined && !this.probing) void this.probe();
  }

  async probe(): Promise<DatabaseHealth> {
    const started = performance.now();
    let state: DatabaseHealth["state"] = "up";
    this.probing = true;
    try {
      await withTimeout(this.database.db.execute(sql`select 1`), PROBE_TIMEOUT_MS);
    } catch (error) {
      state = "down";
      if (this.latest.state !== "down") this.logger.warn("database unreachable", { error });
    } finally {
      this.probing = false;
    }
    this.latest = {
      state,
      kind: this.database.kind,
      checkedAt: new Date().toISOString(),
      latencyMs: Math.round((performance.now() - started) * 100) / 100,
    };
    return this.latest;
  }

  async start(): Promise<void> {
    await this.probe();
    this.timer = setInterval(() => void this.probe(), this.intervalMs);
    this.timer.unref?.();
  }

  stop(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
  }
}
