import { and, desc, eq } from "drizzle-orm";
import type { Database } from "../../db/client";
import { models, trainingJobs } from "../../db/schema";
import { AppError } from "../../shared/errors";
import { toModelMetadata } from "./mappers";
import type { PipelineStatusType } from "./schemas";

/**
 * The model of the latest completed training, with whether it was published. A training whose model was
 * kept back (it did not beat the serving one) still is the latest result the caller asked for: showing
 * the older serving model instead hid that the training had run at all.
 */
export async function getPipelineStatus({
  ctx,
  deps,
}: {
  ctx: { readonly accountId: number };
  deps: { readonly database: Database };
}): Promise<PipelineStatusType> {
  const [row] = await deps.database.db
    .select({ model: models })
    .from(trainingJobs)
    .innerJoin(models, and(eq(models.id, trainingJobs.modelId), eq(models.accountId, ctx.accountId)))
    .where(and(eq(trainingJobs.accountId, ctx.accountId), eq(trainingJobs.status, "completed")))
    .orderBy(desc(trainingJobs.finishedAt), desc(trainingJobs.id))
    .limit(1);
  if (row === undefined)
    throw new AppError("NO_MODEL", "No trained model yet: start one with POST /api/v1/pipeline/train");
  return { ...toModelMetadata(row.model), published: row.model.isPublished };
}
