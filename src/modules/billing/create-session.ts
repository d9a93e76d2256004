import { and, eq } from "drizzle-orm";
import { accounts, billingSessions } from "../../db/schema";
import type { TenantContext } from "../../http/tenant";
import { AppError, validationError } from "../../shared/errors";
import { isPaidPlan } from "../plans/catalog";
import { type BillingDeps, configuredBilling } from "./configured";
import { requireReturnUrl } from "./return-url";
import type { BillingSessionType, SessionRequestType } from "./schemas";

export type { BillingDeps } from "./configured";

/**
 * Opens a checkout or subscription session with the payment provider for a paid plan. The plan changes
 * only when the provider's webhook reports the payer's authorisation.
 */
export async function createBillingSession({
  ctx,
  deps,
  input,
  kind,
}: {
  ctx: TenantContext;
  deps: BillingDeps;
  input: SessionRequestType;
  kind: "subscription" | "checkout";
}): Promise<BillingSessionType> {
  const { payments } = configuredBilling(deps);
  requireReturnUrl("successUrl", input.successUrl);
  requireReturnUrl("cancelUrl", input.cancelUrl);
  const plan = deps.plans[input.plan];
  if (plan === undefined || !isPaidPlan(plan)) {
    const paid = Object.values(deps.plans)
      .filter(isPaidPlan)
      .map((p) => p.name);
    throw validationError([
      {
        loc: ["body", "plan"],
        msg: `must be one of the paid plans: ${paid.join(", ")}`,
        type: "value_error.plan",
      },
    ]);
  }
  if (ctx.account.plan === plan.name && ctx.account.subscriptionStatus === "active") {
    throw new AppError("CONFLICT", `The account already has an active ${plan.name} subscription`);
  }
  if (ctx.actor.type !== "user")
    throw new AppError("INVALID_TOKEN", "Billing needs the dashboard user's token");
  const successUrl = input.successUrl ?? deps.config.publicBaseUrl;
  const request = { accountId: ctx.accountId, plan, payerEmail: ctx.actor.email, backUrl: successUrl };
  const session =
    kind === "subscription"
      ? await payments.createSubscription(request)
      : await payments.createCheckout(request);
  const [row] = await deps.database.db
    .insert(billingSessions)
    .values({
      accountId: ctx.accountId,
      provider: payments.name,
      kind,
      plan: plan.name,
      status: "pending",
      externalId: session.externalId,
      checkoutUrl: session.checkoutUrl,
      successUrl,
      cancelUrl: input.cancelUrl ?? deps.config.publicBaseUrl,
    })
    .returning();
  if (ctx.account.subscriptionStatus === "none") {
    await deps.database.db
      .update(accounts)
      .set({ subscriptionStatus: "pending", updatedAt: new Date() })
      .where(and(eq(accounts.id, ctx.accountId), eq(accounts.subscriptionStatus, "none")));
    await deps.identity.accounts.changed(ctx.accountId);
  }
  return {
    sessionId: row!.id,
    provider: row!.provider,
    kind: row!.kind,
    plan: row!.plan,
    status: row!.status,
    checkoutUrl: session.checkoutUrl,
    createdAt: row!.createdAt.toISOString(),
  };
}
