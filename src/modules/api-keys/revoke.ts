import { sql } from "drizzle-orm";
import type { Database } from "../../db/client";
import { apiKeys } from "../../db/schema";
import type { TenantContext } from "../../http/tenant";
import { notFound } from "../../shared/errors";
import type { Identity } from "../auth/identity";
import { activeKeyOfAccount } from "./metadata";

/** What this use case reads from the app. */
export interface Deps {
  readonly database: Database;
  readonly identity: Identity;
}

/** Revokes one key of the account; it stops authenticating on the next request, in every process. */
export async function revokeApiKey({
  ctx,
  deps,
  input,
}: {
  ctx: TenantContext;
  deps: Deps;
  input: { id: number };
}) {
  const rows = await deps.database.db
    .update(apiKeys)
    .set({ revokedAt: sql`now()` })
    .where(activeKeyOfAccount(ctx.accountId, input.id))
    .returning({ id: apiKeys.id });
  if (rows.length === 0) throw notFound("API key");
  await deps.identity.keys.revoked({ keyIds: rows.map((row) => row.id) });
}

/** Revokes every key of the account, including the one making this request. */
export async function revokeAllApiKeys({ ctx, deps }: { ctx: TenantContext; deps: Deps }) {
  await deps.database.db
    .update(apiKeys)
    .set({ revokedAt: sql`now()` })
    .where(activeKeyOfAccount(ctx.accountId));
  await deps.identity.keys.revoked({ accountId: ctx.accountId });
}
