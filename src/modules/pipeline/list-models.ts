import { desc, eq } from "drizzle-orm";
import { models } from "../../db/schema";
import type { AppDeps } from "../../deps";
import { toModelMetadata } from "./mappers";
import type { ModelMetadataType } from "./schemas";

/** The account's models, newest first, published or not (isPublished tells which one serves). */
export async function listModels({
  ctx,
  deps,
  input,
}: {
  ctx: { readonly accountId: number };
  deps: Pick<AppDeps, "database">;
  input: { limit?: number | undefined; offset?: number | undefined };
}): Promise<ModelMetadataType[]> {
  const rows = await deps.database.db
    .select()
    .from(models)
    .where(eq(models.accountId, ctx.accountId))
    .orderBy(desc(models.id))
    .limit(input.limit ?? 10)
    .offset(input.offset ?? 0);
  return rows.map(toModelMetadata);
}
