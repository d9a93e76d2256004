import type { AppDeps } from "../../deps";
import type { TenantContext } from "../../http/auth";
import { FREE_PLAN } from "../plans/catalog";
import { countAccountData } from "./counts";
import type { SandboxStatusType } from "./schemas";

export async function getSandboxStatus({
  ctx,
  deps,
}: {
  ctx: TenantContext;
  deps: Pick<AppDeps, "database">;
}): Promise<SandboxStatusType> {
  return {
    plan: ctx.account.plan,
    sandbox: ctx.account.plan === FREE_PLAN,
    counts: await countAccountData(deps, ctx.accountId),
  };
}
