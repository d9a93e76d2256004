import { and, desc, eq, inArray } from "drizzle-orm";
import { billingSessions } from "../../db/schema";
import type { TenantContext } from "../../http/auth";
import { notFound } from "../../shared/errors";
import type { BillingDeps } from "./create-session";

/** The account's current subscription: its latest authorised session. */
export async function currentSubscription(
  deps: Pick<BillingDeps, "database" | "payments">,
  accountId: number,
) {
  const [row] = await deps.database.db
    .select()
    .from(billingSessions)
    .where(
      and(
        eq(billingSessions.accountId, accountId),
        eq(billingSessions.provider, deps.payments.name),
        eq(billingSessions.status, "authorized"),
        inArray(billingSessions.kind, ["subscription", "checkout"]),
      ),
    )
    .orderBy(desc(billingSessions.id))
    .limit(1);
  return row;
}

export async function createPortalSession({
  ctx,
  deps,
  input,
}: {
  ctx: TenantContext;
  deps: BillingDeps;
  input: { returnUrl?: string } | undefined;
}): Promise<{ provider: string; url: string }> {
  const subscription = await currentSubscription(deps, ctx.accountId);
  if (subscription === undefined) throw notFound("An authorised subscription");
  const returnUrl = input?.returnUrl ?? deps.config.publicBaseUrl;
  const portal = await deps.payments.createPortal({
    accountId: ctx.accountId,
    subscriptionExternalId: subscription.externalId,
    returnUrl,
  });
  await deps.database.db.insert(billingSessions).values({
    accountId: ctx.accountId,
    provider: deps.payments.name,
    kind: "portal",
    plan: subscription.plan,
    status: "pending",
    externalId: portal.externalId,
    checkoutUrl: portal.url,
    successUrl: returnUrl,
    cancelUrl: returnUrl,
  });
  return { provider: deps.payments.name, url: portal.url };
}
