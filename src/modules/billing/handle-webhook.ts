/**
 * The inbound provider webhook: signature and replay window first, then idempotency by event id
 * (payment_events), then the subscription's state read back from the provider and applied to the account.
 */
import { and, eq, ne } from "drizzle-orm";
import { accounts, billingSessions, paymentEvents } from "../../db/schema";
import { AppError, notFound } from "../../shared/errors";
import type { BillingDeps } from "./configured";
import type { ProviderSubscription } from "./provider";
import type { WebhookAnswerType, WebhookEventType } from "./schemas";
import { verifySignature } from "./signature";
import { cancelSuperseded, supersedeOlderSubscriptions } from "./supersede";

const SUBSCRIPTION_EVENTS = new Set(["subscription_preapproval", "preapproval"]);

export async function handleWebhook({
  deps,
  provider,
  signature,
  requestId,
  queryDataId,
  event,
}: {
  deps: BillingDeps;
  provider: string;
  signature: string | null;
  /** The X-Request-Id header: part of MercadoPago's signed manifest. */
  requestId?: string | null;
  /** MercadoPago signs the `data.id` of the notification URL's query (lower-cased when alphanumeric). */
  queryDataId?: string | null;
  event: WebhookEventType;
}): Promise<WebhookAnswerType> {
  const payments = deps.payments;
  if (payments === undefined || provider !== payments.name) throw notFound(`Payment provider ${provider}`);
  const dataId = String(event.data.id);
  if (payments.name === "mercadopago") {
    const signedId = (queryDataId ?? dataId).toLowerCase();
    if (signedId !== dataId.toLowerCase()) {
      throw new AppError("INVALID_SIGNATURE", "The signed data.id does not match the notification's");
    }
    verifySignature(deps.config.paymentWebhookSecret, signature, {
      dataId: signedId,
      requestId: requestId ?? null,
    });
  } else {
    verifySignature(deps.config.paymentWebhookSecret, signature, dataId);
  }
  const eventId = String(event.id);
  if (await alreadyProcessed(deps, provider, eventId)) return { received: true, duplicate: true };

  // Read the state from the provider before the transaction: no network wait while holding a connection.
  const subscription = SUBSCRIPTION_EVENTS.has(event.type)
    ? await payments.fetchSubscription(dataId)
    : undefined;
  const outcome = await deps.database.db.transaction(async (tx) => {
    const [inserted] = await tx
      .insert(paymentEvents)
      .values({ provider, eventId, accountId: subscription?.accountId ?? null, payload: event })
      .onConflictDoNothing()
      .returning({ eventId: paymentEvents.eventId });
    if (inserted === undefined) return { duplicate: true, accountId: undefined, superseded: [] };
    if (subscription === undefined) return { duplicate: false, accountId: undefined, superseded: [] };
    return { duplicate: false, ...(await applySubscription(tx, provider, subscription)) };
  });
  if (outcome.accountId !== undefined) await deps.identity.accounts.changed(outcome.accountId);
  if (outcome.superseded.length > 0) await cancelSuperseded({ ...deps, payments }, outcome.superseded);
  deps.logger.info("payment webhook processed", {
    provider,
    eventId,
    type: event.type,
    status: subscription?.status,
    accountId: outcome.accountId,
    duplicate: outcome.duplicate,
  });
  return { received: true, duplicate: outcome.duplicate };
}

async function alreadyProcessed(deps: BillingDeps, provider: string, eventId: string): Promise<boolean> {
  const [row] = await deps.database.db
    .select({ eventId: paymentEvents.eventId })
    .from(paymentEvents)
    .where(and(eq(paymentEvents.provider, provider), eq(paymentEvents.eventId, eventId)));
  return row !== undefined;
}

type Tx = Parameters<Parameters<BillingDeps["database"]["db"]["transaction"]>[0]>[0];

/**
 * Answers the account whose subscription changed (undefined when nothing applied) and the provider ids of
 * the subscriptions an authorisation superseded.
 */
async function applySubscription(
  tx: Tx,
  provider: string,
  subscription: ProviderSubscription,
): Promise<{ accountId: number | undefined; superseded: string[] }> {
  const nothing = { accountId: undefined, superseded: [] };
  const [session] = await tx
    .select()
    .from(billingSessions)
    .where(
      and(eq(billingSessions.provider, provider), eq(billingSessions.externalId, subscription.externalId)),
    )
    .limit(1);
  if (session === undefined) return nothing;
  if (subscription.accountId !== null && subscription.accountId !== session.accountId) {
    throw new AppError("CONFLICT", "The subscription's external reference does not match its session");
  }
  const now = new Date();
  if (subscription.status === "authorized") {
    // Replaced by a newer subscription and being cancelled: its webhooks no longer change the plan.
    if (session.status === "superseded") return nothing;
    await tx
      .update(billingSessions)
      .set({ status: "authorized", updatedAt: now })
      .where(eq(billingSessions.id, session.id));
    await tx
      .update(accounts)
      .set({
        plan: session.plan,
        subscriptionStatus: "active",
        subscriptionRenewsAt: subscription.renewsAt,
        paymentCustomerId: subscription.customerId,
        updatedAt: now,
      })
      .where(eq(accounts.id, session.accountId));
    return { accountId: session.accountId, superseded: await supersedeOlderSubscriptions(tx, session) };
  }
  if (subscription.status === "cancelled" || subscription.status === "paused") {
    await tx
      .update(billingSessions)
      .set({ status: "cancelled", updatedAt: now })
      .where(eq(billingSessions.id, session.id));
    // Only the subscription the account is on makes it lapse; an abandoned older one changes nothing.
    const [otherActive] = await tx
      .select({ id: billingSessions.id })
      .from(billingSessions)
      .where(
        and(
          eq(billingSessions.accountId, session.accountId),
          eq(billingSessions.status, "authorized"),
          eq(billingSessions.plan, session.plan),
          ne(billingSessions.id, session.id),
        ),
      )
      .limit(1);
    if (otherActive !== undefined) return nothing;
    // Back to FREE with FREE's limits: a cancelled plan never locks the account out of its own data.
    const changed = await tx
      .update(accounts)
      .set({ plan: "FREE", subscriptionStatus: "cancelled", subscriptionRenewsAt: null, updatedAt: now })
      .where(
        and(
          eq(accounts.id, session.accountId),
          eq(accounts.plan, session.plan),
          eq(accounts.subscriptionStatus, "active"),
        ),
      )
      .returning({ id: accounts.id });
    return { accountId: changed.length > 0 ? session.accountId : undefined, superseded: [] };
  }
  return nothing;
}
