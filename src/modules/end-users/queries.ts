/** End-user reads as drizzle builders, shared by the use cases and the EXPLAIN test. */
import { and, asc, count, eq } from "drizzle-orm";
import type { DbOrTx } from "../../db/client";
import { endUsers } from "../../db/schema";

export function endUserLookupQuery(db: DbOrTx, accountId: number, externalId: string) {
  return db
    .select()
    .from(endUsers)
    .where(and(eq(endUsers.accountId, accountId), eq(endUsers.externalId, externalId)))
    .limit(1);
}

export function endUserPageQuery(db: DbOrTx, accountId: number, skip: number, limit: number) {
  return db
    .select()
    .from(endUsers)
    .where(eq(endUsers.accountId, accountId))
    .orderBy(asc(endUsers.id))
    .offset(skip)
    .limit(limit);
}

export function endUserCountQuery(db: DbOrTx, accountId: number) {
  return db.select({ total: count() }).from(endUsers).where(eq(endUsers.accountId, accountId));
}
