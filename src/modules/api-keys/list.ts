import { asc } from "drizzle-orm";
import { apiKeys } from "../../db/schema";
import type { AppDeps } from "../../deps";
import type { TenantContext } from "../../http/auth";
import { AppError } from "../../shared/errors";
import { activeKeyOfAccount, toMetadata } from "./metadata";

export async function listApiKeys({ ctx, deps }: { ctx: TenantContext; deps: AppDeps }) {
  const rows = await deps.database.db
    .select()
    .from(apiKeys)
    .where(activeKeyOfAccount(ctx.accountId))
    .orderBy(asc(apiKeys.id));
  return rows.map((row) => toMetadata(deps, row));
}

/** Metadata of the key that authenticated this request; a JWT-only call has none (404). */
export async function getCurrentApiKey({ ctx, deps }: { ctx: TenantContext; deps: AppDeps }) {
  const keyId = ctx.actor.type === "apiKey" ? ctx.actor.keyId : ctx.actor.apiKeyId;
  if (keyId === undefined)
    throw new AppError("NOT_FOUND", "No API key in use: send it in the X-API-Key header");
  const [row] = await deps.database.db.select().from(apiKeys).where(activeKeyOfAccount(ctx.accountId, keyId));
  if (row === undefined) throw new AppError("NOT_FOUND", "API key not found");
  return toMetadata(deps, row);
}
