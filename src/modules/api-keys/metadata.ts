import { and, eq, isNull } from "drizzle-orm";
import { apiKeys } from "../../db/schema";
import type { Identity } from "../auth/identity";
import type { ApiKeyMetadataOutput } from "./schemas";

/** What this use case reads from the app. */
export interface Deps {
  readonly identity: Identity;
}

export const activeKeyOfAccount = (accountId: number, keyId?: number) =>
  and(
    eq(apiKeys.accountId, accountId),
    isNull(apiKeys.revokedAt),
    ...(keyId === undefined ? [] : [eq(apiKeys.id, keyId)]),
  );

/** Maps a row to the public metadata, folding in this process's not-yet-written last use. */
export function toMetadata(deps: Deps, row: typeof apiKeys.$inferSelect): ApiKeyMetadataOutput {
  const pending = deps.identity.lastUsed.pending(row.id);
  const lastUsed =
    pending !== undefined && (row.lastUsedAt === null || pending > row.lastUsedAt) ? pending : row.lastUsedAt;
  return {
    id: row.id,
    name: row.name,
    kind: row.kind === "publishable" ? "publishable" : "secret",
    prefix: row.prefix,
    lastChars: row.lastChars,
    scopes: row.scopes,
    allowedDomains: row.allowedDomains,
    created_at: row.createdAt.toISOString(),
    last_used_at: lastUsed === null ? null : lastUsed.toISOString(),
  };
}
