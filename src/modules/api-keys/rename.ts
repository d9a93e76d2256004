import { apiKeys } from "../../db/schema";
import type { AppDeps } from "../../deps";
import type { TenantContext } from "../../http/auth";
import { notFound } from "../../shared/errors";
import { activeKeyOfAccount, toMetadata } from "./metadata";

export async function renameApiKey({
  ctx,
  deps,
  input,
}: {
  ctx: TenantContext;
  deps: AppDeps;
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
