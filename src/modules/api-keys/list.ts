import { asc } from "drizzle-orm";
import type { Database } from "../../db/client";
import { apiKeys } from "../../db/schema";
import type { TenantContext } from "../../http/tenant";
import { AppError } from "../../shared/errors";
import type { Deps as MetadataDeps } from "./metadata";
import { activeKeyOfAccount, toMetadata } from "./metadata";

/** What this use case reads from the app. */
export interface Deps extends MetadataDeps {
  readonly database: Database;
}

export async function listApiKeys({ ctx, deps }: { ctx: TenantContext; deps: Deps }) {
  const rows = await deps.database.db
    .select()
    .from(apiKeys)
    .where(activeKeyOfAccount(ctx.accountId))
    .orderBy(asc(apiKeys.id));
  return rows.map((row) => toMetadata(deps, row));
}

/** Metadata of the key that authenticated this request; a JWT-only call has none (404). */
export async function getCurrentApiKey({ ctx, deps }: { ctx: TenantContext; deps: Deps }) {
  const keyId = ctx.actor.type === "apiKey" ? ctx.actor.keyId : ctx.actor.apiKeyId;
  if (keyId === undefined)
    throw new AppError("NOT_FOUND", "No API key in use: send it in the X-API-Key header");
  const [row] = await deps.database.db.select().from(apiKeys).where(activeKeyOfAccount(ctx.accountId, keyId));
  if (row === undefined) throw new AppError("NOT_FOUND", "API key not found");
  return toMetadata(deps, row);
}
