/**
 * Accepts a training request: reserves one of the plan's trainings for the day (429 TRAINING_TOO_FREQUENT
 * otherwise), stores the job row (durable before the 202 is sent, so it survives a restart) and wakes the
 * training workers of every process. Also used by the sandbox quick-start.
 */

import { randomUUID } from "node:crypto";
import type { Config } from "../../config";
import type { Database } from "../../db/client";
import { trainingJobs } from "../../db/schema";
import type { TenantContext } from "../../http/tenant";
import type { JobRunner } from "../../jobs/runner";
import type { Logger } from "../../shared/logger";
import type { RateLimiter } from "../../shared/rate-limit";
import { TRAINING_JOB_KIND } from "../../training/job-kind";
import { STARTED_BY_CUSTOMER } from "../../training/started-by";
import type { PlanEnforcer } from "../plans/enforcer";
import { assertTrainingAllowed } from "../plans/limits";
import type { PlanTableType } from "../plans/schemas";
import type { TrainingAcceptedType, TrainingRequestType } from "./schemas";

export type EnqueueDeps = {
  readonly database: Database;
  readonly config: Config;
  readonly plans: Readonly<PlanTableType>;
  readonly rateLimiter: RateLimiter;
  readonly planEnforcer: PlanEnforcer;
  readonly jobs: JobRunner;
  readonly logger: Logger;
};

export async function enqueueTraining(
  deps: EnqueueDeps,
  tenant: Pick<TenantContext, "accountId" | "account">,
  options: TrainingRequestType = {},
): Promise<TrainingAcceptedType> {
  await assertTrainingAllowed(deps, tenant);
  const [job] = await deps.database.db
    .insert(trainingJobs)
    .values({
      accountId: tenant.accountId,
      taskId: randomUUID(),
      status: "queued",
      startedBy: STARTED_BY_CUSTOMER,
      stage: "queued",
      progress: 0,
      options: { ...options },
    })
    .returning({ id: trainingJobs.id, taskId: trainingJobs.taskId });
  // The row is committed: a lost wake-up only delays the job until the next poll, it never loses it.
  await deps.jobs.announce(TRAINING_JOB_KIND).catch((error: unknown) => {
    deps.logger.warn("could not announce the training job", { error, jobId: job!.id });
  });
  return {
    jobId: job!.id,
    taskId: job!.taskId,
    status: "queued",
    message: `Training job ${job!.id} queued; follow it at /api/v1/pipeline/jobs/${job!.id}/status`,
  };
}
