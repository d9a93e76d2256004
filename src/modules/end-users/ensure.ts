import { and, eq, inArray } from "drizzle-orm";
import type { DbOrTx } from "../../db/client";
import { endUsers } from "../../db/schema";

/**
 * Ids of the given end users, creating the missing ones (an interaction may name a user the shop never
 * sent). Set-based: one lookup, one multi-row insert for the missing, one lookup of what was inserted.
 * `ON CONFLICT DO NOTHING` keeps a concurrent creator of the same user from failing this write.
 */
export async function ensureEndUsers(
  tx: DbOrTx,
  accountId: number,
  externalIds: readonly string[],
): Promise<Map<string, number>> {
  const wanted = [...new Set(externalIds)];
  const ids = new Map<string, number>();
  if (wanted.length === 0) return ids;
  const lookup = async (names: string[]) => {
    const rows = await tx
      .select({ id: endUsers.id, externalId: endUsers.externalId })
      .from(endUsers)
      .where(and(eq(endUsers.accountId, accountId), inArray(endUsers.externalId, names)));
    for (const row of rows) ids.set(row.externalId, row.id);
  };
  await lookup(wanted);
  const missing = wanted.filter((id) => !ids.has(id));
  if (missing.length === 0) return ids;
  await tx
    .insert(endUsers)
    .values(missing.map((externalId) => ({ accountId, externalId })))
    .onConflictDoNothing({ target: [endUsers.accountId, endUsers.externalId] });
  await lookup(missing);
  return ids;
}
