import { and, desc, eq, inArray } from "drizzle-orm";
import { billingSessions } from "../../db/schema";
import type { TenantContext } from "../../http/tenant";
import { type BillingDeps, configuredBilling } from "./configured";
import { LOCAL_PATH, localToken } from "./local-provider";
import type { PaymentProvider } from "./provider";
import { requireReturnUrl } from "./return-url";

/** The account's current subscription: its latest authorised session. */
export async function currentSubscription(
  deps: Pick<BillingDeps, "database"> & { payments: PaymentProvider },
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

/**
 * Every account gets a portal: with a subscription, the provider's page for managing or cancelling it;
 * without one, a page of this service that shows the plans to choose from.
 */
export async function createPortalSession({
  ctx,
  deps,
  input,
}: {
  ctx: TenantContext;
  deps: BillingDeps;
  input: { returnUrl?: string } | undefined;
}): Promise<{ provider: string; url: string }> {
  const billing = configuredBilling(deps);
  requireReturnUrl("returnUrl", input?.returnUrl);
  const subscription = await currentSubscription(billing, ctx.accountId);
  const returnUrl = input?.returnUrl ?? deps.config.publicBaseUrl;
  const portal =
    subscription === undefined
      ? plansPage(deps.config.publicBaseUrl)
      : await billing.payments.createPortal({
          accountId: ctx.accountId,
          subscriptionExternalId: subscription.externalId,
          returnUrl,
        });
  await deps.database.db.insert(billingSessions).values({
    accountId: ctx.accountId,
    provider: billing.payments.name,
    kind: "portal",
    plan: subscription?.plan ?? ctx.account.plan,
    status: "pending",
    externalId: portal.externalId,
    checkoutUrl: portal.url,
    successUrl: returnUrl,
    cancelUrl: returnUrl,
  });
  return { provider: billing.payments.name, url: portal.url };
}

/** The portal page served by this service (see local-pages.ts), whichever provider takes the payments. */
function plansPage(publicBaseUrl: string): { url: string; externalId: string } {
  const externalId = localToken("por");
  return { url: `${publicBaseUrl}${LOCAL_PATH}/portal/${externalId}`, externalId };
}
