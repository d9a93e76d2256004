/**
 * Erasing an end user deletes their interactions at once, but the published model keeps what it learned
 * from them (item factors, similar items, popularity) until the account trains again, and the contract
 * promises that within 24 hours whether or not the customer asks for a training. A periodic sweep queues
 * that training itself: for each account whose published model saw fewer erasures than the account has had
 * (models.erasures_seen against end_user_erasures.erasures), once the latest erasure is older than a short
 * debounce, so a burst of erasures makes one training. The run then publishes whatever its figures
 * (src/training/decide.ts). These trainings are the service's obligation: the plan's trainings per day
 * do not count them, and they are listed with the account's other jobs.
 */
import { type SQL, sql } from "drizzle-orm";
import type { Database } from "../../db/client";
import type { JobRunner } from "../../jobs/runner";
import type { Logger } from "../../shared/logger";
import { TRAINING_JOB_KIND } from "../../training/job-kind";

export interface ErasureRetrainingSettings {
  /** How often the sweep runs (ERASURE_RETRAIN_SWEEP_SECONDS). */
  readonly sweepSeconds: number;
  /** How long after an account's latest erasure its retraining waits (ERASURE_RETRAIN_DEBOUNCE_SECONDS). */
  readonly debounceSeconds: number;
}

type SweepDeps = {
  readonly database: Database;
  readonly jobs: Pick<JobRunner, "announce">;
  readonly logger: Logger;
};

export interface QueuedRetraining {
  readonly accountId: number;
  readonly jobId: number;
}

/**
 * One statement queues every retraining due, with the options of the training that produced the published
 * model. Accounts with a training queued or running are left to it (it reads the data after the erasure
 * too), and so are accounts whose retraining failed since their latest erasure (a training that cannot
 * succeed is not repeated every sweep; the next erasure or a customer's training tries again). Processes
 * sweeping at once on one database queue one job per account: the unique index
 * training_jobs_one_erasure_retraining_key admits one waiting or running retraining, and a second insert
 * waits for the first to commit and then does nothing.
 */
export function erasureRetrainingInsert(debounceSeconds: number): SQL {
  return sql`
    insert into training_jobs (account_id, task_id, status, started_by, stage, progress, options)
    select e.account_id, gen_random_uuid()::text, 'queued', 'erasure', 'queued', 0,
      coalesce((select j.options from training_jobs j
                where j.account_id = m.account_id and j.model_id = m.id
                order by j.id desc limit 1), '{}'::jsonb)
    from end_user_erasures e
    join models m on m.account_id = e.account_id and m.is_published
    where m.erasures_seen < e.erasures
      and e.last_erased_at <= now() - make_interval(secs => ${debounceSeconds})
      and not exists (select 1 from training_jobs q
                      where q.account_id = e.account_id and q.status in ('queued', 'running'))
      and not exists (select 1 from training_jobs f
                      where f.account_id = e.account_id and f.started_by = 'erasure' and f.status = 'failed'
                        and f.created_at > e.last_erased_at)
    on conflict (account_id) where status in ('queued', 'running') and started_by = 'erasure' do nothing
    returning id, account_id`;
}

/** Queues the retrainings due now and wakes the training workers; answers what it queued. */
export async function enqueueErasureRetrainings(
  deps: SweepDeps,
  settings: Pick<ErasureRetrainingSettings, "debounceSeconds">,
): Promise<QueuedRetraining[]> {
  const rows = await deps.database.rows<{ id: number; account_id: number }>(
    erasureRetrainingInsert(settings.debounceSeconds),
  );
  const queued = rows.map((row) => ({ accountId: Number(row.account_id), jobId: Number(row.id) }));
  if (queued.length === 0) return queued;
  deps.logger.info("retraining after end-user erasures queued", {
    accounts: queued.map((q) => q.accountId),
    jobIds: queued.map((q) => q.jobId),
  });
  // The rows are committed: a lost wake-up only delays them until the workers' next poll.
  await deps.jobs.announce(TRAINING_JOB_KIND).catch((error: unknown) => {
    deps.logger.warn("could not announce the retraining jobs", { error });
  });
  return queued;
}

/** The periodic sweep, started and stopped with the app; any number of processes may run it. */
export class ErasureRetrainingSweep {
  private timer: ReturnType<typeof setInterval> | undefined;
  private running: Promise<unknown> | undefined;

  constructor(
    private readonly deps: SweepDeps,
    private readonly settings: ErasureRetrainingSettings,
  ) {}

  start(): void {
    this.timer ??= setInterval(() => {
      // A sweep still waiting on a slow database is not overtaken by the next.
      this.running ??= this.sweep().finally(() => {
        this.running = undefined;
      });
    }, this.settings.sweepSeconds * 1000);
    this.timer.unref?.();
  }

  async stop(): Promise<void> {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
  }

  async sweep(): Promise<QueuedRetraining[]> {
    try {
      return await enqueueErasureRetrainings(this.deps, this.settings);
    } catch (error) {
      this.deps.logger.warn("erasure retraining sweep failed", { error });
      return [];
    }
  }
}
