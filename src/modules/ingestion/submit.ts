import { randomUUID } from "node:crypto";
import type { Database } from "../../db/client";
import { ingestionJobs } from "../../db/schema";
import type { JobRunner } from "../../jobs/runner";
import { offerPayload } from "./handoff";
import { INGESTION_JOB_KIND } from "./process";
import type { BatchRequest } from "./schemas";

/**
 * Accepts a batch: the request is stored with its job row (so it survives a restart) and a worker in any
 * process is woken to apply it; the caller gets the job id at once.
 */
export async function submitBatch({
  ctx,
  deps,
  input,
}: {
  ctx: { readonly accountId: number };
  deps: { readonly database: Database; readonly jobs: JobRunner };
  input: BatchRequest;
}) {
  const totals = {
    totalProducts: input.products?.length ?? 0,
    totalUsers: input.users?.length ?? 0,
    totalInteractions: input.interactions?.length ?? 0,
  };
  const taskId = randomUUID();
  const payload = {
    products: input.products ?? [],
    users: input.users ?? [],
    interactions: input.interactions ?? [],
  };
  const [job] = await deps.database.db
    .insert(ingestionJobs)
    .values({ accountId: ctx.accountId, taskId, status: "processing", payload, ...totals })
    .returning({ id: ingestionJobs.id });
  if (job === undefined) throw new Error("ingestion job insert returned no row");
  if (deps.jobs.runsLocally(INGESTION_JOB_KIND)) offerPayload(deps.database, job.id, payload);
  await deps.jobs.announce(INGESTION_JOB_KIND);
  return {
    message: `Batch accepted: follow it at /api/v1/ingestion/batch/${job.id}`,
    status: "processing" as const,
    jobId: job.id,
    taskId,
    ...totals,
  };
}
