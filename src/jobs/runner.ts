/**
 * The generic background job runner. Jobs are rows in Postgres; any process sharing the database may run
 * them. How to add a kind of job:
 *
 *   const queue = rowQueue({ table: "training_jobs", claimable: ["queued"], running: "running",
 *                            requeued: "queued", failed: "failed", failureColumn: "error" });
 *   deps.jobs.registerJobKind({
 *     kind: "training",            // also the NOTIFY payload on channel "jobs" that wakes idle workers
 *     ...queue,                    // claimNext / heartbeat / release / fail / reclaim for that table
 *     concurrency: 1,              // workers for this kind (default: config.jobConcurrency)
 *     maxAttempts: 3,              // claims before an interrupted job is failed with a reason
 *     run: async (job, { signal, workerId }) => { ... },
 *   });
 *   // after inserting a job row: await deps.jobs.announce("training")
 *
 * Contract for `run(job, context)`:
 * - It owns the job's outcome: it writes the terminal status (completed / failed / …) itself, guarded by
 *   `claimed_by = workerId`, ideally in the same transaction as the last piece of work.
 * - It checks `signal` between units of work and returns early when aborted (graceful stop, or the claim
 *   was lost); the runner then gives the job back (release) so another worker resumes it.
 * - It must be resumable: a job may be run again after a crash, so each unit of work and the job's
 *   progress cursor commit together (see src/modules/ingestion/process.ts).
 * - A thrown error retries the job (the attempt counts) until maxAttempts, then fails it with the message.
 *
 * The runner heartbeats every claimed job; claims whose heartbeat is older than `staleAfterSeconds`, or that
 * an earlier run of this instance left behind (same DATA_DIR, see instance.ts), are reclaimed at start-up
 * and periodically, and failed with a reason once they have used up their attempts.
 */
import type { Database } from "../db/client";
import type { Logger } from "../shared/logger";
import type { ClaimedJob, RowQueue } from "./row-queue";

export const JOBS_CHANNEL = "jobs";

/** Thrown by `run` when its claim-guarded write found the job claimed by someone else: not a failure. */
export class JobClaimLostError extends Error {
  constructor(jobId: number) {
    super(`Job ${jobId} is no longer claimed by this worker`);
    this.name = "JobClaimLostError";
  }
}

export interface JobRunContext {
  /** Aborted on graceful stop or when the claim was lost; finish the current unit of work and return. */
  readonly signal: AbortSignal;
  /** The value in the job's claimed_by column; guard every write to the job row with it. */
  readonly workerId: string;
}

export interface JobKind<J extends ClaimedJob = ClaimedJob> extends RowQueue {
  readonly kind: string;
  readonly concurrency?: number;
  readonly maxAttempts?: number;
  run(job: J, context: JobRunContext): Promise<void>;
}

export interface JobRunnerOptions {
  database: Database;
  logger: Logger;
  /** Workers per kind unless the kind says otherwise; 0 disables the runner (this process only serves). */
  concurrency: number;
  instanceId: string;
  staleAfterSeconds?: number;
  heartbeatMs?: number;
  pollMs?: number;
  reclaimEveryMs?: number;
}

const DEFAULT_MAX_ATTEMPTS = 3;

export class JobRunner {
  private readonly kinds = new Map<string, JobKind>();
  private readonly bootPrefix: string;
  private readonly wakers = new Map<string, Set<() => void>>();
  private readonly workers: Promise<void>[] = [];
  private stopController = new AbortController();
  private running = false;
  private unlisten: (() => Promise<void>) | undefined;
  private reclaimTimer: ReturnType<typeof setInterval> | undefined;

  constructor(private readonly options: JobRunnerOptions) {
    this.bootPrefix = `${options.instanceId}:${Date.now().toString(36)}${process.pid.toString(36)}:`;
  }

  registerJobKind<J extends ClaimedJob>(kind: JobKind<J>): void {
    if (this.kinds.has(kind.kind)) throw new Error(`Job kind ${kind.kind} is registered twice`);
    if (this.running) throw new Error("Register job kinds before the runner starts");
    this.kinds.set(kind.kind, kind as unknown as JobKind);
  }

  /** Wakes idle workers of a kind here and, through NOTIFY, in every other process on the database. */
  async announce(kind: string): Promise<void> {
    this.wake(kind);
    await this.options.database.notify(JOBS_CHANNEL, kind);
  }

  /** Whether a worker of this process may pick up jobs of the kind (it runs and has workers for it). */
  runsLocally(kind: string): boolean {
    const registered = this.kinds.get(kind);
    return (
      this.running && registered !== undefined && (registered.concurrency ?? this.options.concurrency) > 0
    );
  }

  async start(): Promise<void> {
    if (this.running || this.options.concurrency === 0 || this.kinds.size === 0) return;
    this.running = true;
    this.stopController = new AbortController();
    await this.reclaimAll();
    this.unlisten = await this.options.database.listen(JOBS_CHANNEL, (payload) => this.wake(payload));
    this.reclaimTimer = setInterval(() => void this.reclaimAll(), this.options.reclaimEveryMs ?? 30_000);
    for (const kind of this.kinds.values()) {
      const workers = kind.concurrency ?? this.options.concurrency;
      for (let n = 0; n < workers; n++)
        this.workers.push(this.work(kind, `${this.bootPrefix}${kind.kind}:${n}`));
    }
  }

  /** Graceful stop: workers finish their current unit of work, give their jobs back and exit. */
  async stop(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    this.stopController.abort();
    clearInterval(this.reclaimTimer);
    for (const wakers of this.wakers.values()) for (const wake of wakers) wake();
    await Promise.allSettled(this.workers.splice(0));
    await this.unlisten?.().catch(() => {});
    this.unlisten = undefined;
  }

  private wake(kind: string): void {
    for (const wake of this.wakers.get(kind) ?? []) wake();
  }

  private async reclaimAll(): Promise<void> {
    const { database, logger } = this.options;
    for (const kind of this.kinds.values()) {
      try {
        const result = await kind.reclaim(database, {
          staleAfterSeconds: this.options.staleAfterSeconds ?? 60,
          orphanPrefix: `${this.options.instanceId}:`,
          livePrefix: this.bootPrefix,
          maxAttempts: kind.maxAttempts ?? DEFAULT_MAX_ATTEMPTS,
        });
        if (result.requeued + result.failed > 0) {
          logger.warn("interrupted jobs reclaimed", { kind: kind.kind, ...result });
          this.wake(kind.kind);
        }
      } catch (error) {
        if (this.running) logger.error("job reclaim failed", { kind: kind.kind, error });
      }
    }
  }

  private async work(kind: JobKind, workerId: string): Promise<void> {
    const { database, logger } = this.options;
    while (this.running) {
      let job: ClaimedJob | undefined;
      try {
        job = await kind.claimNext(database, workerId);
      } catch (error) {
        if (this.running) logger.error("job claim failed", { kind: kind.kind, error });
      }
      if (job === undefined) {
        await this.idle(kind.kind);
        continue;
      }
      await this.execute(kind, job, workerId);
    }
  }

  private idle(kind: string): Promise<void> {
    return new Promise((resolve) => {
      let wakers = this.wakers.get(kind);
      if (wakers === undefined) {
        wakers = new Set();
        this.wakers.set(kind, wakers);
      }
      const done = () => {
        clearTimeout(timer);
        wakers.delete(done);
        resolve();
      };
      const timer = setTimeout(done, this.options.pollMs ?? 1000);
      wakers.add(done);
      if (!this.running) done();
    });
  }

  private async execute(kind: JobKind, job: ClaimedJob, workerId: string): Promise<void> {
    const { database, logger } = this.options;
    const log = logger.child({
      job: kind.kind,
      jobId: job.id,
      accountId: job.accountId,
      attempt: job.attempts,
    });
    const jobController = new AbortController();
    const onStop = () => jobController.abort();
    this.stopController.signal.addEventListener("abort", onStop);
    const heartbeat = setInterval(() => {
      kind.heartbeat(database, job, workerId).then(
        (held) => {
          if (!held) {
            log.warn("job claim lost; stopping work on it");
            jobController.abort();
          }
        },
        (error: unknown) => log.warn("job heartbeat failed", { error }),
      );
    }, this.options.heartbeatMs ?? 10_000);
    try {
      log.info("job started");
      await kind.run(job, { signal: jobController.signal, workerId });
      // When run returned early because of the abort, the job is unfinished: hand it to the next worker.
      if (jobController.signal.aborted) await kind.release(database, job, workerId, false);
      else log.info("job finished");
    } catch (error) {
      if (error instanceof JobClaimLostError) {
        log.warn("job claim lost; another worker owns it now");
        return;
      }
      const maxAttempts = kind.maxAttempts ?? DEFAULT_MAX_ATTEMPTS;
      const reason = error instanceof Error ? error.message : String(error);
      try {
        if (jobController.signal.aborted) {
          await kind.release(database, job, workerId, false);
        } else if (job.attempts >= maxAttempts) {
          log.error("job failed", { error });
          await kind.fail(database, job, workerId, `Failed after ${job.attempts} attempts: ${reason}`);
        } else {
          log.warn("job attempt failed; it will be retried", { error });
          await kind.release(database, job, workerId, true);
        }
      } catch (cleanupError) {
        // The heartbeat stops below, so the stale-claim reclaim brings the job back.
        log.error("could not record the job's failure", { error: cleanupError });
      }
    } finally {
      clearInterval(heartbeat);
      this.stopController.signal.removeEventListener("abort", onStop);
    }
  }
}
