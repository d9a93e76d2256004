/**
 * The pages of the built-in `local` provider: a checkout page whose confirmation authorises the
 * subscription, and a portal page whose cancellation ends it. Each action reaches the account the same way
 * a real provider would: through the signed webhook, handled in-process.
 */
import { randomUUID } from "node:crypto";
import { and, eq, gt, inArray } from "drizzle-orm";
import { billingSessions } from "../../db/schema";
import { notFound } from "../../shared/errors";
import { currentSubscription } from "./create-portal";
import type { BillingDeps } from "./create-session";
import { handleWebhook } from "./handle-webhook";
import { signatureHeader } from "./signature";

const CHECKOUT_TTL_MS = 24 * 3_600_000;
const PORTAL_TTL_MS = 3_600_000;

async function openSession(deps: BillingDeps, token: string, kinds: string[], ttlMs: number) {
  if (deps.payments.name !== "local") throw notFound("Checkout page");
  const [session] = await deps.database.db
    .select()
    .from(billingSessions)
    .where(
      and(
        eq(billingSessions.provider, "local"),
        eq(billingSessions.externalId, token),
        inArray(billingSessions.kind, kinds),
        gt(billingSessions.createdAt, new Date(Date.now() - ttlMs)),
      ),
    );
  if (session === undefined) throw notFound("Checkout session");
  return session;
}

async function sendWebhook(deps: BillingDeps, dataId: string): Promise<void> {
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
<p>This is the service's built-in test provider: no money is charged.</p>
<form method="post" action="${escapeHtml(token)}/confirm"><button type="submit">Confirm subscription</button></form>
<p><a href="${escapeHtml(session.cancelUrl ?? "/")}">Cancel</a></p>`
      : `<p>This checkout is ${escapeHtml(session.status)}.</p><p><a href="${escapeHtml(session.successUrl ?? "/")}">Continue</a></p>`;
  return page("Confirm your subscription", body);
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
    await sendWebhook(deps, session.externalId);
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
  const subscription = await currentSubscription(deps, portal.accountId);
  const body =
    subscription === undefined
      ? `<p>There is no active subscription.</p><p><a href="${escapeHtml(portal.successUrl ?? "/")}">Back</a></p>`
      : `<p>Your subscription: <strong>${escapeHtml(subscription.plan)}</strong> plan.</p>
<form method="post" action="${escapeHtml(token)}/cancel"><button type="submit">Cancel subscription</button></form>
<p><a href="${escapeHtml(portal.successUrl ?? "/")}">Back</a></p>`;
  return page("Manage your subscription", body);
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
  const subscription = await currentSubscription(deps, portal.accountId);
  if (subscription !== undefined) {
    await deps.database.db
      .update(billingSessions)
      .set({ status: "cancelled", updatedAt: new Date() })
      .where(eq(billingSessions.id, subscription.id));
    await sendWebhook(deps, subscription.externalId);
  }
  return portal.successUrl ?? deps.config.publicBaseUrl;
}

function page(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title>
<meta name="viewport" content="width=device-width, initial-scale=1"></head>
<body style="font-family: system-ui, sans-serif; max-width: 32rem; margin: 3rem auto"><h1>${title}</h1>${body}</body></html>`;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
