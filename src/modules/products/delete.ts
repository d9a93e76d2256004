import { and, eq, isNull, sql } from "drizzle-orm";
import type { AppEvents } from "../../app-events";
import type { Database } from "../../db/client";
import { products } from "../../db/schema";
import { notFound } from "../../shared/errors";

/**
 * Soft delete: the row stays so past interactions keep their product, but the product answers 404, leaves
 * listings and is never recommended; creating the same external id again revives it.
 */
export async function deleteProduct({
  ctx,
  deps,
  input,
}: {
  ctx: { readonly accountId: number };
  deps: { readonly database: Database; readonly events: Pick<AppEvents, "productsChanged"> };
  input: { externalId: string };
}): Promise<void> {
  const deleted = await deps.database.db
    .update(products)
    .set({ deletedAt: sql`now()`, updatedAt: sql`now()` })
    .where(
      and(
        eq(products.accountId, ctx.accountId),
        eq(products.externalId, input.externalId),
        isNull(products.deletedAt),
      ),
    )
    .returning({ id: products.id });
  if (deleted.length === 0) throw notFound("Product");
  deps.events.productsChanged.emit({
    accountId: ctx.accountId,
    externalIds: [input.externalId],
    deleted: true,
  });
}
