import type { Database } from "../../db/client";
import { endUserCountQuery, endUserPageQuery } from "./queries";
import { toEndUser } from "./record";
import type { EndUser } from "./schemas";

/** The account's end users in creation order. */
export async function listEndUsers({
  ctx,
  deps,
  input,
}: {
  ctx: { readonly accountId: number };
  deps: { readonly database: Database };
  input: { skip?: number | undefined; limit?: number | undefined };
}): Promise<{ items: EndUser[]; total: number; skip: number; limit: number }> {
  const skip = input.skip ?? 0;
  const limit = input.limit ?? 100;
  const { db } = deps.database;
  const [rows, [counted]] = await Promise.all([
    endUserPageQuery(db, ctx.accountId, skip, limit),
    endUserCountQuery(db, ctx.accountId),
  ]);
  return { items: rows.map(toEndUser), total: Number(counted?.total ?? 0), skip, limit };
}
