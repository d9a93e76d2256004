import { desc, eq } from "drizzle-orm";
import type { Database } from "../../db/client";
import { models } from "../../db/schema";
import { toModelMetadata } from "./mappers";
import type { ModelMetadataType } from "./schemas";

/** The account's models, newest first, published or not (isPublished tells which one serves). */
export async function listModels({
  ctx,
  deps,
  input,
}: {
  ctx: { readonly accountId: number };
  deps: { readonly database: Database };
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
