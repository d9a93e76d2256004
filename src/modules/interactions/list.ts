import type { Database } from "../../db/client";
import { interactionCountQuery, interactionPageQuery } from "./queries";
import { toInteraction } from "./record";
import type { Interaction } from "./schemas";

/** The account's interactions, most recently recorded first. */
export async function listInteractions({
  ctx,
  deps,
  input,
}: {
  ctx: { readonly accountId: number };
  deps: { readonly database: Database };
  input: { skip?: number | undefined; limit?: number | undefined };
}): Promise<{ items: Interaction[]; total: number; skip: number; limit: number }> {
  const skip = input.skip ?? 0;
  const limit = input.limit ?? 100;
  const { db } = deps.database;
  const [rows, [counted]] = await Promise.all([
    interactionPageQuery(db, ctx.accountId, skip, limit),
    interactionCountQuery(db, ctx.accountId),
  ]);
  return { items: rows.map(toInteraction), total: Number(counted?.total ?? 0), skip, limit };
}
