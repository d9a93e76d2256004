import type { Database } from "../../db/client";
import type { TenantContext } from "../../http/tenant";
import { FREE_PLAN } from "../plans/catalog";
import { countAccountData } from "./counts";
import type { SandboxStatusType } from "./schemas";

export async function getSandboxStatus({
  ctx,
  deps,
}: {
  ctx: TenantContext;
  deps: { readonly database: Database };
}): Promise<SandboxStatusType> {
  return {
    plan: ctx.account.plan,
    sandbox: ctx.account.plan === FREE_PLAN,
    counts: await countAccountData(deps, ctx.accountId),
  };
}
