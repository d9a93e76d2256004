import { and, desc, eq } from "drizzle-orm";
import { models } from "../../db/schema";
import type { AppDeps } from "../../deps";
import { AppError } from "../../shared/errors";
import { toModelMetadata } from "./mappers";
import type { ModelMetadataType } from "./schemas";

/**
 * The model that serves now: the newest published one. A later model that was kept back because it was
 * worse is not "the last successful training" from the caller's point of view, so it is not shown here.
 */
export async function getPipelineStatus({
  ctx,
  deps,
}: {
  ctx: { readonly accountId: number };
  deps: Pick<AppDeps, "database">;
}): Promise<ModelMetadataType> {
  const [row] = await deps.database.db
    .select()
    .from(models)
    .where(and(eq(models.accountId, ctx.accountId), eq(models.isPublished, true)))
    .orderBy(desc(models.id))
    .limit(1);
  if (row === undefined)
    throw new AppError("NO_MODEL", "No trained model yet: start one with POST /api/v1/pipeline/train");
  return toModelMetadata(row);
}
