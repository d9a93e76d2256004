import { and, eq, sql } from "drizzle-orm";
import type { DbOrTx } from "../../db/client";
import { textArray } from "../../db/pg-array";
import { endUsers } from "../../db/schema";

/**
 * Ids of the given end users, creating the missing ones (an interaction may name a user the shop never
 * sent). Set-based: one lookup, one insert of the missing, one lookup of what was inserted; the names travel
 * as one array parameter (`= any($1::text[])`), so a 1000-user chunk is not 1000 bind parameters.
 * `ON CONFLICT DO NOTHING` keeps a concurrent creator of the same user from failing this write.
 */
export async function ensureEndUsers(
  tx: DbOrTx,
  accountId: number,
  externalIds: readonly string[],
  /**
   * Called with the users about to be created, before they are: it may refuse them all by throwing, or
   * answer the ones to create (the others are left out of the answer).
   */
  beforeCreate?: (missing: readonly string[]) => Promise<readonly string[] | undefined>,
): Promise<Map<string, number>> {
  const wanted = [...new Set(externalIds)];
  const ids = new Map<string, number>();
  if (wanted.length === 0) return ids;
  const lookup = async (names: readonly string[]) => {
    const rows = await tx
      .select({ id: endUsers.id, externalId: endUsers.externalId })
      .from(endUsers)
      .where(
        and(
          eq(endUsers.accountId, accountId),
          sql`${endUsers.externalId} = any(${textArray(names)}::text[])`,
        ),
      );
    for (const row of rows) ids.set(row.externalId, row.id);
  };
  await lookup(wanted);
  const wantedMissing = wanted.filter((id) => !ids.has(id));
  if (wantedMissing.length === 0) return ids;
  const missing = (await beforeCreate?.(wantedMissing)) ?? wantedMissing;
  if (missing.length === 0) return ids;
  await tx.execute(sql`insert into end_users (account_id, external_id)
    select ${accountId}, unnest(${textArray(missing)}::text[])
    on conflict (account_id, external_id) do nothing`);
  await lookup(missing);
  return ids;
}
