/**
 * The pages of the built-in `local` provider, an explicit test mode (every page says so): a checkout page
 * whose confirmation authorises the subscription, and a portal page whose cancellation ends it. Each
 * action reaches the account the same way a real provider would: through the signed webhook, handled
 * in-process. The portal page also serves accounts without a subscription under any provider: it shows the
 * plans to choose from.
 */
import { randomUUID } from "node:crypto";
import { and, eq, gt, inArray } from "drizzle-orm";
import { billingSessions } from "../../db/schema";
import { notFound } from "../../shared/errors";
import { type BillingDeps, type ConfiguredBillingDeps, configuredBilling } from "./configured";
import { currentSubscription } from "./create-portal";
import { handleWebhook } from "./handle-webhook";
import { signatureHeader } from "./signature";

const CHECKOUT_TTL_MS = 24 * 3_600_000;
const PORTAL_TTL_MS = 3_600_000;

async function openSession(deps: BillingDeps, token: string, kinds: string[], ttlMs: number) {
  // Checkout pages belong to the local test provider only; portal pages to whichever provider is set.
  const provider = kinds.includes("portal") ? deps.payments?.name : "local";
  if (provider === undefined || deps.payments?.name !== provider) throw notFound("Checkout page");
  const [session] = await deps.database.db
    .select()
    .from(billingSessions)
    .where(
      and(
        eq(billingSessions.provider, provider),
        eq(billingSessions.externalId, token),
        inArray(billingSessions.kind, kinds),
        gt(billingSessions.createdAt, new Date(Date.now() - ttlMs)),
      ),
    );
  if (session === undefined) throw notFound("Checkout session");
  return session;
}

async function sendWebhook(deps: ConfiguredBillingDeps, dataId: string): Promise<void> {
  await handleWebhook({
    deps,
    provider: "local",
    signature: signatureHeader(deps.config.paymentWebhookSecret, dataId),
    event: {
      id: `evt_${randomUUID()}`,
      type: "subscription_preapproval",
      action: "updated",
      data: { id: dataId },
    },
  });
}

export async function renderCheckoutPage({
  deps,
  token,
}: {
  deps: BillingDeps;
  token: string;
}): Promise<string> {
  const session = await openSession(deps, token, ["subscription", "checkout"], CHECKOUT_TTL_MS);
  const plan = deps.plans[session.plan];
  const price = plan === undefined ? "" : `${plan.priceMonthly} ${plan.currency} per month`;
  const body =
    session.status === "pending"
      ? `<p>Subscribe to the <strong>${escapeHtml(session.plan)}</strong> plan: ${escapeHtml(price)}.</p>
<p>This is the service's built-in test provider (PAYMENT_PROVIDER=local): no money is charged.</p>
<form method="post" action="${escapeHtml(token)}/confirm"><button type="submit">Confirm subscription</button></form>
<p><a href="${escapeHtml(session.cancelUrl ?? "/")}">Cancel</a></p>`
      : `<p>This checkout is ${escapeHtml(session.status)}.</p><p><a href="${escapeHtml(session.successUrl ?? "/")}">Continue</a></p>`;
  return page("Confirm your subscription", body, true);
}

/** Authorises the subscription and answers where to send the payer. */
export async function confirmLocalCheckout({
  deps,
  token,
}: {
  deps: BillingDeps;
  token: string;
}): Promise<string> {
  const session = await openSession(deps, token, ["subscription", "checkout"], CHECKOUT_TTL_MS);
  if (session.status === "pending") {
    await deps.database.db
      .update(billingSessions)
      .set({ status: "authorized", updatedAt: new Date() })
      .where(and(eq(billingSessions.id, session.id), eq(billingSessions.status, "pending")));
    await sendWebhook(configuredBilling(deps), session.externalId);
  }
  return session.successUrl ?? deps.config.publicBaseUrl;
}

export async function renderPortalPage({
  deps,
  token,
}: {
  deps: BillingDeps;
  token: string;
}): Promise<string> {
  const portal = await openSession(deps, token, ["portal"], PORTAL_TTL_MS);
  const billing = configuredBilling(deps);
  const subscription = await currentSubscription(billing, portal.accountId);
  const back = `<p><a href="${escapeHtml(portal.successUrl ?? "/")}">Back</a></p>`;
  const body =
    subscription === undefined
      ? `<p>There is no active subscription: the account is on the <strong>${escapeHtml(portal.plan)}</strong> plan.</p>
${plansTable(deps)}
<p>To subscribe, choose a plan in your dashboard (it opens a checkout session).</p>${back}`
      : `<p>Your subscription: <strong>${escapeHtml(subscription.plan)}</strong> plan.</p>
<form method="post" action="${escapeHtml(token)}/cancel"><button type="submit">Cancel subscription</button></form>
<p>Cancelling moves the account to the FREE plan; its data stays.</p>${back}`;
  return page("Manage your subscription", body, billing.payments.name === "local");
}

/** Cancels the account's current subscription; the account's paid plan lapses. */
export async function cancelLocalSubscription({
  deps,
  token,
}: {
  deps: BillingDeps;
  token: string;
}): Promise<string> {
  const portal = await openSession(deps, token, ["portal"], PORTAL_TTL_MS);
  const billing = configuredBilling(deps);
  const subscription = await currentSubscription(billing, portal.accountId);
  if (subscription !== undefined && billing.payments.name === "local") {
    await deps.database.db
      .update(billingSessions)
      .set({ status: "cancelled", updatedAt: new Date() })
      .where(eq(billingSessions.id, subscription.id));
    await sendWebhook(billing, subscription.externalId);
  }
  return portal.successUrl ?? deps.config.publicBaseUrl;
}

function plansTable(deps: BillingDeps): string {
  const rows = Object.values(deps.plans)
    .map(
      (plan) =>
        `<tr><td>${escapeHtml(plan.name)}</td><td>${escapeHtml(`${plan.priceMonthly} ${plan.currency}`)}</td>` +
        `<td>${plan.limits.requestsPerMinute}</td><td>${plan.limits.maxProducts}</td></tr>`,
    )
    .join("");
  return `<table><tr><th>Plan</th><th>Per month</th><th>Requests/min</th><th>Products</th></tr>${rows}</table>`;
}

function page(title: string, body: string, testMode: boolean): string {
  const banner = testMode
    ? '<p style="background: #fff3cd; padding: .5rem 1rem"><strong>TEST MODE</strong>: payments are simulated; no money is charged.</p>'
    : "";
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title>
<meta name="viewport" content="width=device-width, initial-scale=1"></head>
<body style="font-family: system-ui, sans-serif; max-width: 32rem; margin: 3rem auto">${banner}<h1>${title}</h1>${body}</body></html>`;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
