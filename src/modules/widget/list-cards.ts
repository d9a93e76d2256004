import { and, eq, inArray, isNull, sql } from "drizzle-orm";
import type { Database } from "../../db/client";
import { products } from "../../db/schema";
import type { ProductCards } from "./schemas";

/**
 * What a shop page shows of recommended products: name, price, image and link (the `image_url` and `url`
 * attributes). Only live products of the caller's account; ids it does not know are left out, exactly as
 * another account's, so the answer says nothing about other tenants.
 */
export async function listProductCards({
  ctx,
  deps,
  input,
}: {
  ctx: { readonly accountId: number };
  deps: { readonly database: Database };
  input: { ids: readonly string[] };
}): Promise<ProductCards> {
  const ids = [...new Set(input.ids)];
  const rows = await deps.database.db
    .select({
      externalId: products.externalId,
      name: products.name,
      price: products.price,
      imageUrl: sql<unknown>`${products.attributes} -> 'image_url'`,
      url: sql<unknown>`${products.attributes} -> 'url'`,
    })
    .from(products)
    .where(
      and(
        eq(products.accountId, ctx.accountId),
        inArray(products.externalId, ids),
        isNull(products.deletedAt),
      ),
    );
  const byId = new Map(rows.map((row) => [row.externalId, row]));
  const items = [];
  for (const id of ids) {
    const row = byId.get(id);
    if (row === undefined) continue;
    items.push({
      externalId: row.externalId,
      name: row.name,
      price: Number(row.price),
      imageUrl: typeof row.imageUrl === "string" ? row.imageUrl : null,
      url: typeof row.url === "string" ? row.url : null,
    });
  }
  return { items };
}
