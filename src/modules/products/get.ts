import type { Database } from "../../db/client";
import { notFound } from "../../shared/errors";
import { productLookupQuery } from "./queries";
import { toProduct } from "./record";
import type { Product } from "./schemas";

/** A live product by external id; deleted products and other accounts' products are 404 alike. */
export async function getProduct({
  ctx,
  deps,
  input,
}: {
  ctx: { readonly accountId: number };
  deps: { readonly database: Database };
  input: { externalId: string };
}): Promise<Product> {
  const [row] = await productLookupQuery(deps.database.db, ctx.accountId, input.externalId);
  if (row === undefined) throw notFound("Product");
  return toProduct(row);
}
