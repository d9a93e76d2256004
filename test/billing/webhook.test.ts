import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { signatureFor, signatureHeader } from "../../src/modules/billing/signature";
import { createTestContext, type TestContext } from "../helpers/context";
import { registerTenant } from "../helpers/tenant";

let ctx: TestContext;
// Billing needs PAYMENT_PROVIDER: `local` is the explicit test mode.
beforeAll(async () => {
  ctx = await createTestContext({ PAYMENT_PROVIDER: "local" });
});
afterAll(() => ctx.close());

const secret = () => ctx.deps.config.paymentWebhookSecret;

/** A pending local session for a new tenant, marked authorised at the provider (as confirming would). */
async function authorisedSession(): Promise<{ externalId: string; accountId: number; apiKey: string }> {
  const tenant = await registerTenant(ctx);
  const res = await ctx.request("POST", "/api/v1/billing/create-subscription-session", {
    apiKey: tenant.apiKey,
    token: tenant.token,
    body: { plan: "STARTER" },
  });
  const externalId = res.body.checkoutUrl.split("/").pop() as string;
  await ctx.deps.database.db.execute(
    sql`update billing_sessions set status = 'authorized' where external_id = ${externalId}`,
  );
  return { externalId, accountId: tenant.accountId, apiKey: tenant.apiKey };
}

const send = (event: unknown, signature: string | undefined, provider = "local") =>
  ctx.request("POST", `/api/v1/billing/webhook/${provider}`, {
    body: event,
    headers: signature === undefined ? {} : { "x-signature": signature },
  });

const eventFor = (dataId: string, id = `evt_${crypto.randomUUID()}`) => ({
  id,
  type: "subscription_preapproval",
  action: "updated",
  data: { id: dataId },
  live_mode: false,
});

describe("POST /api/v1/billing/webhook/{provider}", () => {
  test("a correctly signed subscription_preapproval with status authorized activates the plan", async () => {
    const session = await authorisedSession();
    const res = await send(eventFor(session.externalId), signatureHeader(secret(), session.externalId));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ received: true, duplicate: false });
    const usage = await ctx.request("GET", "/api/v1/accounts/usage", { apiKey: session.apiKey });
    expect(usage.body.plan).toBe("STARTER");
    expect(usage.body.subscriptionStatus).toBe("active");
  });

  test("a missing, malformed or wrong signature answers 401 INVALID_SIGNATURE and changes nothing", async () => {
    const session = await authorisedSession();
    const ts = Math.floor(Date.now() / 1000);
    const wrongSecret = `ts=${ts},v1=${signatureFor("not-the-secret", session.externalId, ts)}`;
    const otherId = `ts=${ts},v1=${signatureFor(secret(), "another-id", ts)}`;
    for (const signature of [undefined, "garbage", wrongSecret, otherId]) {
      const res = await send(eventFor(session.externalId), signature);
      expect(res.status).toBe(401);
      expect(res.body.errorCode).toBe("INVALID_SIGNATURE");
    }
    const usage = await ctx.request("GET", "/api/v1/accounts/usage", { apiKey: session.apiKey });
    expect(usage.body.plan).toBe("FREE");
  });

  test("a signature older than five minutes is a replay: 401 INVALID_SIGNATURE", async () => {
    const session = await authorisedSession();
    const old = Math.floor(Date.now() / 1000) - 6 * 60;
    const res = await send(eventFor(session.externalId), signatureHeader(secret(), session.externalId, old));
    expect(res.status).toBe(401);
    expect(res.body.errorCode).toBe("INVALID_SIGNATURE");
  });

  test("a duplicate event id is acknowledged and ignored", async () => {
    const session = await authorisedSession();
    const event = eventFor(session.externalId);
    const first = await send(event, signatureHeader(secret(), session.externalId));
    expect(first.body.duplicate).toBe(false);
    // Meanwhile the subscription was cancelled; replaying the old event id must not re-activate anything.
    await ctx.deps.database.db.execute(
      sql`update accounts set subscription_status = 'lapsed' where id = ${session.accountId}`,
    );
    await ctx.deps.identity.accounts.changed(session.accountId);
    const again = await send(event, signatureHeader(secret(), session.externalId));
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ received: true, duplicate: true });
    const usage = await ctx.request("GET", "/api/v1/accounts/usage", { apiKey: session.apiKey });
    expect(usage.body.subscriptionStatus).toBe("lapsed");
  });

  test("concurrent deliveries of one event are applied once", async () => {
    const session = await authorisedSession();
    const event = eventFor(session.externalId);
    const results = await Promise.all(
      Array.from({ length: 4 }, () => send(event, signatureHeader(secret(), session.externalId))),
    );
    expect(results.every((r) => r.status === 200)).toBe(true);
    expect(results.filter((r) => r.body.duplicate === false).length).toBe(1);
  });

  test("a provider other than the configured one answers 404", async () => {
    const session = await authorisedSession();
    const res = await send(
      eventFor(session.externalId),
      signatureHeader(secret(), session.externalId),
      "stripe",
    );
    expect(res.status).toBe(404);
  });

  test("other event types are acknowledged without effect", async () => {
    const session = await authorisedSession();
    const event = { ...eventFor(session.externalId), type: "payment" };
    const res = await send(event, signatureHeader(secret(), session.externalId));
    expect(res.status).toBe(200);
    const usage = await ctx.request("GET", "/api/v1/accounts/usage", { apiKey: session.apiKey });
    expect(usage.body.plan).toBe("FREE");
  });
});
