import { and, desc, eq, type SQL } from "drizzle-orm";
import type { Database } from "../../db/client";
import { trainingJobs } from "../../db/schema";
import { toJobStatus } from "./mappers";
import type { TrainingJobStatusType } from "./schemas";

/** Newest first; `status` is matched exactly (an unknown state simply matches nothing). */
export async function listTrainingJobs({
  ctx,
  deps,
  input,
}: {
  ctx: { readonly accountId: number };
  deps: { readonly database: Database };
  input: { limit?: number | undefined; status?: string | undefined };
}): Promise<TrainingJobStatusType[]> {
  const filters: SQL[] = [eq(trainingJobs.accountId, ctx.accountId)];
  if (input.status !== undefined) filters.push(eq(trainingJobs.status, input.status));
  const rows = await deps.database.db
    .select()
    .from(trainingJobs)
    .where(and(...filters))
    .orderBy(desc(trainingJobs.id))
    .limit(input.limit ?? 20);
  return rows.map(toJobStatus);
}
