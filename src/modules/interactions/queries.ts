/** Interaction reads as drizzle builders, shared by the use cases and the EXPLAIN test. */
import { and, count, desc, eq } from "drizzle-orm";
import type { DbOrTx } from "../../db/client";
import { endUsers, interactions, products } from "../../db/schema";

const interactionColumns = {
  id: interactions.id,
  externalUserId: endUsers.externalId,
  externalProductId: products.externalId,
  interactionType: interactions.interactionType,
  value: interactions.value,
  query: interactions.query,
  occurredAt: interactions.occurredAt,
};

/** Newest recorded first, on the (account_id, id) index; joins by primary key for the external ids. */
export function interactionPageQuery(db: DbOrTx, accountId: number, skip: number, limit: number) {
  return db
    .select(interactionColumns)
    .from(interactions)
    .innerJoin(endUsers, eq(endUsers.id, interactions.endUserId))
    .innerJoin(products, eq(products.id, interactions.productId))
    .where(eq(interactions.accountId, accountId))
    .orderBy(desc(interactions.id))
    .offset(skip)
    .limit(limit);
}

export function interactionCountQuery(db: DbOrTx, accountId: number) {
  return db.select({ total: count() }).from(interactions).where(eq(interactions.accountId, accountId));
}

/** All of one end user's interactions, newest first (export). */
export function endUserInteractionsQuery(db: DbOrTx, accountId: number, endUserId: number) {
  return db
    .select(interactionColumns)
    .from(interactions)
    .innerJoin(endUsers, eq(endUsers.id, interactions.endUserId))
    .innerJoin(products, eq(products.id, interactions.productId))
    .where(and(eq(interactions.accountId, accountId), eq(interactions.endUserId, endUserId)))
    .orderBy(desc(interactions.occurredAt), desc(interactions.id));
}

export type InteractionRow = Awaited<ReturnType<typeof interactionPageQuery>>[number];
