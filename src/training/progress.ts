/**
 * Writes a running job's progress and stage, throttled: the engine may report hundreds of steps, but the
 * row needs at most about one write a second. Writes are chained so they land in order, are guarded by the
 * claim (a reclaimed job is never written by its old owner), and never fail the job: progress is advisory.
 */
import { sql } from "drizzle-orm";
import type { Database } from "../db/client";

const MIN_INTERVAL_MS = 1000;

export class ProgressWriter {
  private lastWrite = 0;
  private lastStage = "";
  private lastPercent = -1;
  private chain: Promise<void> = Promise.resolve();
  private closed = false;

  constructor(
    private readonly database: Database,
    private readonly jobId: number,
    private readonly workerId: string,
  ) {}

  /** Returns a promise for callers that want the write done (forced updates); others may ignore it. */
  update(stage: string, percent: number, options: { force?: boolean } = {}): Promise<void> {
    const value = Math.min(99, Math.max(0, Math.round(percent)));
    const now = Date.now();
    const changed = stage !== this.lastStage || value !== this.lastPercent;
    if (this.closed || !changed) return this.chain;
    if (!options.force && stage === this.lastStage && now - this.lastWrite < MIN_INTERVAL_MS)
      return this.chain;
    this.lastWrite = now;
    this.lastStage = stage;
    this.lastPercent = value;
    this.chain = this.chain.then(() =>
      this.database
        .rows(sql`
          update training_jobs set stage = ${stage}, progress = ${value}
          where id = ${this.jobId} and claimed_by = ${this.workerId} and status = 'running'`)
        .then(
          () => undefined,
          () => undefined,
        ),
    );
    return this.chain;
  }

  /** Stops further writes; the job's final state is written by the step that finishes it. */
  close(): void {
    this.closed = true;
  }
}
