import { and, count, eq, isNull, sql } from "drizzle-orm";
import type { Database } from "../../db/client";
import { accounts, apiKeys, systemUsers } from "../../db/schema";
import type { TenantContext } from "../../http/tenant";
import { AppError } from "../../shared/errors";
import type { Identity } from "../auth/identity";
import { requireUser } from "./get";

/** What this use case reads from the app. */
export interface Deps {
  readonly database: Database;
  readonly identity: Identity;
}

/**
 * Deletes the current user; with the row gone every token it held is refused. When it was the account's
 * last user, nobody could manage the account any more, so the account is deactivated and its API keys
 * revoked (its data is kept).
 */
export async function deleteCurrentUser({ ctx, deps }: { ctx: TenantContext; deps: Deps }) {
  const { userId } = requireUser(ctx);
  const closedAccount = await deps.database.db.transaction(async (tx) => {
    const deleted = await tx
      .delete(systemUsers)
      .where(and(eq(systemUsers.id, userId), eq(systemUsers.accountId, ctx.accountId)))
      .returning({ id: systemUsers.id });
    if (deleted.length === 0) throw new AppError("TOKEN_REVOKED", "The access token has been revoked");
    const [remaining] = await tx
      .select({ users: count() })
      .from(systemUsers)
      .where(eq(systemUsers.accountId, ctx.accountId));
    if ((remaining?.users ?? 0) > 0) return false;
    await tx
      .update(accounts)
      .set({ isActive: false, updatedAt: new Date() })
      .where(eq(accounts.id, ctx.accountId));
    await tx
      .update(apiKeys)
      .set({ revokedAt: sql`now()` })
      .where(and(eq(apiKeys.accountId, ctx.accountId), isNull(apiKeys.revokedAt)));
    return true;
  });
  await deps.identity.accounts.changed(ctx.accountId);
  if (closedAccount) await deps.identity.keys.revoked({ accountId: ctx.accountId });
}
