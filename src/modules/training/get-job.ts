import { and, eq } from "drizzle-orm";
import type { Database } from "../../db/client";
import { trainingJobs } from "../../db/schema";
import { notFound } from "../../shared/errors";
import { toJobStatus } from "./mappers";
import type { TrainingJobStatusType } from "./schemas";

/** A job of another account answers 404 exactly like a job that does not exist. */
export async function getTrainingJob({
  ctx,
  deps,
  input,
}: {
  ctx: { readonly accountId: number };
  deps: { readonly database: Database };
  input: { jobId: number };
}): Promise<TrainingJobStatusType> {
  const [row] = await deps.database.db
    .select()
    .from(trainingJobs)
    .where(and(eq(trainingJobs.accountId, ctx.accountId), eq(trainingJobs.id, input.jobId)));
  if (row === undefined) throw notFound("Training job");
  return toJobStatus(row);
}
