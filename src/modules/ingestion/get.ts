import { and, eq } from "drizzle-orm";
import type { Database } from "../../db/client";
import { ingestionJobs } from "../../db/schema";
import { notFound } from "../../shared/errors";
import type { BatchJobStatus } from "./schemas";
import { toBatchJobStatus } from "./status";

export async function getBatchJob({
  ctx,
  deps,
  input,
}: {
  ctx: { readonly accountId: number };
  deps: { readonly database: Database };
  input: { jobId: number };
}): Promise<BatchJobStatus> {
  const [row] = await deps.database.db
    .select()
    .from(ingestionJobs)
    .where(and(eq(ingestionJobs.accountId, ctx.accountId), eq(ingestionJobs.id, input.jobId)));
  if (row === undefined) throw notFound("Ingestion job");
  return toBatchJobStatus(row);
}
