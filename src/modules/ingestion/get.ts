import { and, eq } from "drizzle-orm";
import { ingestionJobs } from "../../db/schema";
import type { AppDeps } from "../../deps";
import { notFound } from "../../shared/errors";
import type { BatchJobStatus } from "./schemas";
import { toBatchJobStatus } from "./status";

export async function getBatchJob({
  ctx,
  deps,
  input,
}: {
  ctx: { readonly accountId: number };
  deps: Pick<AppDeps, "database">;
  input: { jobId: number };
}): Promise<BatchJobStatus> {
  const [row] = await deps.database.db
    .select()
    .from(ingestionJobs)
    .where(and(eq(ingestionJobs.accountId, ctx.accountId), eq(ingestionJobs.id, input.jobId)));
  if (row === undefined) throw notFound("Ingestion job");
  return toBatchJobStatus(row);
}
