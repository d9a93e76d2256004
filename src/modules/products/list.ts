import type { Database } from "../../db/client";
import { productCountQuery, productPageQuery } from "./queries";
import { toProduct } from "./record";
import type { Product } from "./schemas";

export interface ProductListInput {
  category?: string | undefined;
  skip?: number | undefined;
  limit?: number | undefined;
}

/** Live products of the account in creation order; a category includes its sub-categories. */
export async function listProducts({
  ctx,
  deps,
  input,
}: {
  ctx: { readonly accountId: number };
  deps: { readonly database: Database };
  input: ProductListInput;
}): Promise<{ items: Product[]; total: number; skip: number; limit: number }> {
  const skip = input.skip ?? 0;
  const limit = input.limit ?? 100;
  const { db } = deps.database;
  const [rows, [counted]] = await Promise.all([
    productPageQuery(db, ctx.accountId, { category: input.category, skip, limit }),
    productCountQuery(db, ctx.accountId, input.category),
  ]);
  return { items: rows.map(toProduct), total: Number(counted?.total ?? 0), skip, limit };
}
