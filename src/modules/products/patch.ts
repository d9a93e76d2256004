import { and, eq, isNull, sql } from "drizzle-orm";
import type { AppEvents } from "../../app-events";
import type { Database } from "../../db/client";
import { products } from "../../db/schema";
import { notFound } from "../../shared/errors";
import { toProduct } from "./record";
import type { Product, ProductPatch } from "./schemas";

/**
 * Partial update (PATCH): only the fields given change; omitted ones, `brand` and `attributes` included,
 * keep their stored values. `null` clears `description` or `brand`. Deleted products answer 404.
 */
export async function patchProduct({
  ctx,
  deps,
  input,
}: {
  ctx: { readonly accountId: number };
  deps: { readonly database: Database; readonly events: Pick<AppEvents, "productsChanged"> };
  input: { externalId: string; changes: ProductPatch };
}): Promise<Product> {
  const { changes } = input;
  const [row] = await deps.database.db
    .update(products)
    .set({
      ...(changes.name !== undefined && { name: changes.name }),
      ...(changes.description !== undefined && { description: changes.description }),
      ...(changes.price !== undefined && { price: changes.price }),
      ...(changes.category !== undefined && { category: changes.category }),
      ...(changes.brand !== undefined && { brand: changes.brand }),
      ...(changes.inStock !== undefined && { inStock: changes.inStock }),
      ...(changes.attributes !== undefined && { attributes: changes.attributes }),
      updatedAt: sql`now()`,
    })
    .where(
      and(
        eq(products.accountId, ctx.accountId),
        eq(products.externalId, input.externalId),
        isNull(products.deletedAt),
      ),
    )
    .returning();
  if (row === undefined) throw notFound("Product");
  deps.events.productsChanged.emit({
    accountId: ctx.accountId,
    externalIds: [row.externalId],
    deleted: false,
  });
  return toProduct(row);
}
