/**
 * Training as a kind of background job (src/jobs): rows of training_jobs, claimed with
 * FOR UPDATE SKIP LOCKED so two processes never train the same job, heart-beaten while they run, and
 * requeued (or failed with a reason after maxAttempts) when the process that held them died.
 */

import { rowQueue } from "../jobs/row-queue";
import type { JobKind } from "../jobs/runner";
import { runTrainingJob, type TrainingDeps } from "./run-job";

export const TRAINING_JOB_KIND = "training";

export function trainingJobKind(deps: TrainingDeps): JobKind {
  return {
    kind: TRAINING_JOB_KIND,
    ...rowQueue({
      table: "training_jobs",
      claimable: ["queued"],
      running: "running",
      requeued: "queued",
      failed: "failed",
      failureColumn: "error",
    }),
    // A fit uses every core it can get; two at once in one process would only slow both down.
    concurrency: 1,
    maxAttempts: 3,
    run: (job, context) => runTrainingJob(deps, job, context),
  };
}
