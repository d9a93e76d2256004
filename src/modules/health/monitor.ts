import { sql } from "drizzle-orm";
import type { Database } from "../../db/client";
import type { Logger } from "../../shared/logger";

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
  private current: DatabaseHealth;
  private timer: ReturnType<typeof setInterval> | undefined;

  constructor(
    private readonly database: Database,
    private readonly logger: Logger,
    private readonly intervalMs = 5000,
  ) {
    this.current = { state: "unknown", kind: database.kind, checkedAt: null, latencyMs: null };
  }

  snapshot(): DatabaseHealth {
    return this.current;
  }

  async probe(): Promise<DatabaseHealth> {
    const started = performance.now();
    let state: DatabaseHealth["state"] = "up";
    try {
      await this.database.db.execute(sql`select 1`);
    } catch (error) {
      state = "down";
      if (this.current.state !== "down") this.logger.warn("database unreachable", { error });
    }
    this.current = {
      state,
      kind: this.database.kind,
      checkedAt: new Date().toISOString(),
      latencyMs: Math.round((performance.now() - started) * 100) / 100,
    };
    return this.current;
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
