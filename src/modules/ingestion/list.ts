import { and, desc, eq } from "drizzle-orm";
import type { Database } from "../../db/client";
import { ingestionJobs } from "../../db/schema";
import type { BatchJobStatus } from "./schemas";
import { toBatchJobStatus } from "./status";

/** The account's ingestion jobs, newest first, on the (account_id, id) index. */
export async function listBatchJobs({
  ctx,
  deps,
  input,
}: {
  ctx: { readonly accountId: number };
  deps: { readonly database: Database };
  input: { limit?: number | undefined; status?: string | undefined };
}): Promise<BatchJobStatus[]> {
  const rows = await deps.database.db
    .select()
    .from(ingestionJobs)
    .where(
      and(
        eq(ingestionJobs.accountId, ctx.accountId),
        input.status === undefined ? undefined : eq(ingestionJobs.status, input.status),
      ),
    )
    .orderBy(desc(ingestionJobs.id))
    .limit(input.limit ?? 20);
  const now = Date.now();
  return rows.map((row) => toBatchJobStatus(row, now));
}
