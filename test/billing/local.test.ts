import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { lapseOverdueSubscriptions } from "../../src/modules/billing/lapse-sweeper";
import { signatureHeader } from "../../src/modules/billing/signature";
import { createTestContext, type TestContext } from "../helpers/context";
import { registerTenant, type Tenant } from "../helpers/tenant";

let ctx: TestContext;
// Billing needs PAYMENT_PROVIDER: `local` is the explicit test mode.
beforeAll(async () => {
  ctx = await createTestContext({ PAYMENT_PROVIDER: "local" });
});
afterAll(() => ctx.close());

const both = (tenant: Tenant) => ({ apiKey: tenant.apiKey, token: tenant.token });
const pathOf = (url: string) => new URL(url).pathname;

async function subscribe(tenant: Tenant, plan = "PRO") {
  const session = await ctx.request("POST", "/api/v1/billing/create-subscription-session", {
    ...both(tenant),
    body: { plan, successUrl: "https://shop.example.com/billing/done" },
  });
  expect(session.status).toBe(200);
  const confirmed = await ctx.request("POST", `${pathOf(session.body.checkoutUrl)}/confirm`);
  expect(confirmed.status).toBe(303);
  return session.body;
}

describe("POST /api/v1/billing/create-subscription-session", () => {
  test("answers a pending session whose checkout URL is served by this service", async () => {
    const tenant = await registerTenant(ctx);
    const res = await ctx.request("POST", "/api/v1/billing/create-subscription-session", {
      ...both(tenant),
      body: { plan: "STARTER" },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      provider: "local",
      kind: "subscription",
      plan: "STARTER",
      status: "pending",
    });
    expect(res.body.checkoutUrl).toStartWith(
      `${ctx.deps.config.publicBaseUrl}/api/v1/billing/local/checkout/`,
    );
    const page = await ctx.request("GET", pathOf(res.body.checkoutUrl));
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toContain("text/html");
    expect(page.text).toContain("STARTER");
    // Nothing changes until the provider confirms.
    const usage = await ctx.request("GET", "/api/v1/accounts/usage", { apiKey: tenant.apiKey });
    expect(usage.body.plan).toBe("FREE");
    expect(usage.body.subscriptionStatus).toBe("pending");
  });

  test("answers 422 for FREE or an unknown plan and 409 for the plan already active", async () => {
    const tenant = await registerTenant(ctx);
    for (const plan of ["FREE", "GOLDEN"]) {
      const res = await ctx.request("POST", "/api/v1/billing/create-subscription-session", {
        ...both(tenant),
        body: { plan },
      });
      expect(res.status).toBe(422);
      expect(res.body.detail[0].loc).toEqual(["body", "plan"]);
    }
    await subscribe(tenant, "STARTER");
    const again = await ctx.request("POST", "/api/v1/billing/create-checkout-session", {
      ...both(tenant),
      body: { plan: "STARTER" },
    });
    expect(again.status).toBe(409);
  });

  test("needs both an API key and a JWT of the same account", async () => {
    const tenant = await registerTenant(ctx);
    const other = await registerTenant(ctx);
    const path = "/api/v1/billing/create-subscription-session";
    const body = { plan: "PRO" };
    const none = await ctx.request("POST", path, { body });
    expect(none.status).toBe(401);
    const keyOnly = await ctx.request("POST", path, { apiKey: tenant.apiKey, body });
    expect(keyOnly.status).toBe(401);
    expect(keyOnly.body.errorCode).toBe("INVALID_TOKEN");
    const tokenOnly = await ctx.request("POST", path, { token: tenant.token, body });
    expect(tokenOnly.status).toBe(401);
    expect(tokenOnly.body.errorCode).toBe("INVALID_API_KEY");
    const mixed = await ctx.request("POST", path, { apiKey: other.apiKey, token: tenant.token, body });
    expect(mixed.status).toBe(403);
  });
});

describe("end-to-end upgrade through the local provider", () => {
  test("subscription session → confirmation → signed webhook → plan active → higher limits", async () => {
    const tenant = await registerTenant(ctx);
    const before = await ctx.request("GET", "/api/v1/accounts/usage", { apiKey: tenant.apiKey });
    expect(before.headers.get("x-ratelimit-limit")).toBe(
      String(ctx.deps.plans.FREE!.limits.requestsPerMinute),
    );

    const session = await ctx.request("POST", "/api/v1/billing/create-subscription-session", {
      ...both(tenant),
      body: { plan: "PRO", successUrl: "https://shop.example.com/billing/done" },
    });
    const confirmed = await ctx.request("POST", `${pathOf(session.body.checkoutUrl)}/confirm`);
    expect(confirmed.status).toBe(303);
    expect(confirmed.headers.get("location")).toBe("https://shop.example.com/billing/done");

    const after = await ctx.request("GET", "/api/v1/accounts/usage", { apiKey: tenant.apiKey });
    expect(after.status).toBe(200);
    expect(after.body.plan).toBe("PRO");
    expect(after.body.subscriptionStatus).toBe("active");
    expect(after.body.limits.requestsPerMinute).toBe(ctx.deps.plans.PRO!.limits.requestsPerMinute);
    expect(after.headers.get("x-ratelimit-limit")).toBe(String(ctx.deps.plans.PRO!.limits.requestsPerMinute));
    const [event] = await ctx.deps.database.rows<{ n: number }>(
      sql`select count(*)::int as n from payment_events where account_id = ${tenant.accountId}`,
    );
    expect(event!.n).toBe(1);

    // Confirming twice changes nothing more.
    expect((await ctx.request("POST", `${pathOf(session.body.checkoutUrl)}/confirm`)).status).toBe(303);
  });

  test("an unknown checkout token answers 404", async () => {
    const res = await ctx.request("GET", "/api/v1/billing/local/checkout/loc_chk_unknown");
    expect(res.status).toBe(404);
  });
});

describe("POST /api/v1/billing/create-portal-session and lapsing", () => {
  test("every account gets a portal: without a subscription it shows the plans to choose from", async () => {
    const tenant = await registerTenant(ctx);
    const res = await ctx.request("POST", "/api/v1/billing/create-portal-session", both(tenant));
    expect(res.status).toBe(200);
    const page = await ctx.request("GET", pathOf(res.body.url));
    expect(page.status).toBe(200);
    for (const plan of ["FREE", "STARTER", "PRO"]) expect(page.text).toContain(plan);
    expect(page.text).toContain("TEST MODE");
    expect(page.text).not.toContain("Cancel subscription");
  });

  test("needs both an API key and a JWT", async () => {
    const tenant = await registerTenant(ctx);
    const res = await ctx.request("POST", "/api/v1/billing/create-portal-session", { token: tenant.token });
    expect(res.status).toBe(401);
  });

  test("cancelling in the portal moves the account to FREE: never locked out, FREE limits", async () => {
    const tenant = await registerTenant(ctx);
    await subscribe(tenant, "STARTER");
    const portal = await ctx.request("POST", "/api/v1/billing/create-portal-session", {
      ...both(tenant),
      body: { returnUrl: "https://shop.example.com/account" },
    });
    expect(portal.status).toBe(200);
    expect(portal.body.provider).toBe("local");
    const page = await ctx.request("GET", pathOf(portal.body.url));
    expect(page.status).toBe(200);
    expect(page.text).toContain("STARTER");
    const cancelled = await ctx.request("POST", `${pathOf(portal.body.url)}/cancel`);
    expect(cancelled.status).toBe(303);
    expect(cancelled.headers.get("location")).toBe("https://shop.example.com/account");

    const api = await ctx.request("GET", "/api/v1/sandbox/status", { apiKey: tenant.apiKey });
    expect(api.status).toBe(200);
    const usage = await ctx.request("GET", "/api/v1/accounts/usage", { apiKey: tenant.apiKey });
    expect(usage.status).toBe(200);
    expect(usage.body.plan).toBe("FREE");
    expect(usage.body.subscriptionStatus).toBe("cancelled");
    expect(usage.body.limits.requestsPerMinute).toBe(ctx.deps.plans.FREE!.limits.requestsPerMinute);
    const account = await ctx.request("GET", "/api/v1/accounts/current", { apiKey: tenant.apiKey });
    expect(account.body).toMatchObject({ plan: "FREE", subscriptionRenewsAt: null });

    // Subscribing again restores the plan.
    await subscribe(tenant, "STARTER");
    const restored = await ctx.request("GET", "/api/v1/sandbox/status", { apiKey: tenant.apiKey });
    expect(restored.status).toBe(200);
  });

  test("a paid subscription whose renewal date passed the grace period lapses to FREE, still usable", async () => {
    const tenant = await registerTenant(ctx);
    await subscribe(tenant, "STARTER");
    // A local subscription shows when it renews: a month after authorisation.
    const active = await ctx.request("GET", "/api/v1/accounts/current", { apiKey: tenant.apiKey });
    const renewsAt = Date.parse(active.body.subscriptionRenewsAt);
    expect(renewsAt - Date.now()).toBeGreaterThan(29 * 86_400_000);
    expect(renewsAt - Date.now()).toBeLessThan(31 * 86_400_000);
    await ctx.deps.database.db.execute(
      sql`update accounts set subscription_renews_at = now() - interval '4 days' where id = ${tenant.accountId}`,
    );
    const lapsed = await lapseOverdueSubscriptions(ctx.deps);
    expect(lapsed).toContain(tenant.accountId);
    const api = await ctx.request("GET", "/api/v1/sandbox/status", { apiKey: tenant.apiKey });
    expect(api.status).toBe(200);
    const usage = await ctx.request("GET", "/api/v1/accounts/usage", { apiKey: tenant.apiKey });
    expect(usage.body).toMatchObject({ plan: "FREE", subscriptionStatus: "lapsed" });
  });

  test("changing from one paid plan to another cancels the old subscription; its webhooks no longer change the plan", async () => {
    const tenant = await registerTenant(ctx);
    const starter = await subscribe(tenant, "STARTER");
    const pro = await subscribe(tenant, "PRO");
    const usage = await ctx.request("GET", "/api/v1/accounts/usage", { apiKey: tenant.apiKey });
    expect(usage.body.plan).toBe("PRO");
    expect(usage.body.subscriptionStatus).toBe("active");
    const sessions = await ctx.deps.database.rows<{ id: number; status: string }>(sql`
      select id, status from billing_sessions where account_id = ${tenant.accountId} order by id`);
    expect(sessions).toEqual([
      { id: starter.sessionId, status: "cancelled" },
      { id: pro.sessionId, status: "authorized" },
    ]);

    // A late notification of the old subscription is read back from the provider: cancelled, not current.
    const oldToken = pathOf(starter.checkoutUrl).split("/").pop()!;
    const late = await ctx.request("POST", "/api/v1/billing/webhook/local", {
      body: { id: `evt_${crypto.randomUUID()}`, type: "subscription_preapproval", data: { id: oldToken } },
      headers: { "x-signature": signatureHeader(ctx.deps.config.paymentWebhookSecret, oldToken) },
    });
    expect(late.status).toBe(200);
    const after = await ctx.request("GET", "/api/v1/accounts/usage", { apiKey: tenant.apiKey });
    expect(after.body.plan).toBe("PRO");
    expect(after.body.subscriptionStatus).toBe("active");

    // The portal manages the current subscription.
    const portal = await ctx.request("POST", "/api/v1/billing/create-portal-session", { ...both(tenant) });
    expect((await ctx.request("GET", pathOf(portal.body.url))).text).toContain("PRO");
  });
});
