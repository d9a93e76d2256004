import type { Database } from "../../db/client";
import { apiKeys } from "../../db/schema";
import type { TenantContext } from "../../http/tenant";
import { notFound } from "../../shared/errors";
import type { Deps as MetadataDeps } from "./metadata";
import { activeKeyOfAccount, toMetadata } from "./metadata";

/** What this use case reads from the app. */
export interface Deps extends MetadataDeps {
  readonly database: Database;
}

export async function renameApiKey({
  ctx,
  deps,
  input,
}: {
  ctx: TenantContext;
  deps: Deps;
  input: { id: number; name: string };
}) {
  const [row] = await deps.database.db
    .update(apiKeys)
    .set({ name: input.name.trim() })
    .where(activeKeyOfAccount(ctx.accountId, input.id))
    .returning();
  if (row === undefined) throw notFound("API key");
  return toMetadata(deps, row);
}
