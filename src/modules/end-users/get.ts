import type { Database } from "../../db/client";
import { notFound } from "../../shared/errors";
import { endUserLookupQuery } from "./queries";
import { toEndUser } from "./record";
import type { EndUser } from "./schemas";

export async function getEndUser({
  ctx,
  deps,
  input,
}: {
  ctx: { readonly accountId: number };
  deps: { readonly database: Database };
  input: { externalId: string };
}): Promise<EndUser> {
  const [row] = await endUserLookupQuery(deps.database.db, ctx.accountId, input.externalId);
  if (row === undefined) throw notFound("End user");
  return toEndUser(row);
}
