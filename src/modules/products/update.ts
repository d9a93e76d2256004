import { and, eq, isNull, sql } from "drizzle-orm";
import { products } from "../../db/schema";
import type { AppDeps } from "../../deps";
import { notFound } from "../../shared/errors";
import { emitProductsChanged } from "./events";
import { toProduct } from "./record";
import type { Product, ProductUpdate } from "./schemas";

/** Full update (PUT): every field is replaced; omitted optional fields return to their defaults. */
export async function updateProduct({
  ctx,
  deps,
  input,
}: {
  ctx: { readonly accountId: number };
  deps: Pick<AppDeps, "database">;
  input: { externalId: string; product: ProductUpdate };
}): Promise<Product> {
  const { product } = input;
  const [row] = await deps.database.db
    .update(products)
    .set({
      name: product.name,
      description: product.description ?? null,
      price: product.price,
      category: product.category,
      brand: product.brand ?? null,
      inStock: product.inStock ?? true,
      attributes: product.attributes ?? {},
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
  emitProductsChanged({ accountId: ctx.accountId, externalIds: [row.externalId], deleted: false });
  return toProduct(row);
}
