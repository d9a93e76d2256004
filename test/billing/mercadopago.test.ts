import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { signatureHeader } from "../../src/modules/billing/signature";
import { cancelSuperseded } from "../../src/modules/billing/supersede";
import { createTestContext, type TestContext } from "../helpers/context";
import { registerTenant } from "../helpers/tenant";

/** A stand-in for MercadoPago's preapproval API, recording what the service sent. */
interface Preapproval {
  id: string;
  init_point: string;
  status: string;
  external_reference: string;
  payer_id: number;
  next_payment_date: string;
}
const preapprovals = new Map<string, Preapproval>();
const received: { method: string; path: string; auth: string | null; body: unknown }[] = [];
const TOKEN = "TEST-access-token";
/** How many coming PUTs the stand-in answers with a 500. */
let failUpdates = 0;

const standIn = Bun.serve({
  port: 0,
  async fetch(request) {
    const url = new URL(request.url);
    const body = request.method === "POST" || request.method === "PUT" ? await request.json() : undefined;
    received.push({
      method: request.method,
      path: url.pathname,
      auth: request.headers.get("authorization"),
      body,
    });
    if (request.headers.get("authorization") !== `Bearer ${TOKEN}`) return Response.json({}, { status: 401 });
    if (request.method === "POST" && url.pathname === "/preapproval") {
      const id = `2c938084${crypto.randomUUID().replaceAll("-", "").slice(0, 24)}`;
      const created: Preapproval = {
        id,
        init_point: `https://www.mercadopago.example/subscriptions/checkout?preapproval_id=${id}`,
        status: "pending",
        external_reference: (body as { external_reference: string }).external_reference,
        payer_id: 987654,
        next_payment_date: new Date(Date.now() + 30 * 86_400_000).toISOString(),
      };
      preapprovals.set(id, created);
      return Response.json(created, { status: 201 });
    }
    const match = /^\/preapproval\/([^/]+)$/.exec(url.pathname);
    if (request.method === "PUT" && match) {
      const found = preapprovals.get(decodeURIComponent(match[1]!));
      if (found === undefined) return Response.json({ message: "not found" }, { status: 404 });
      if (failUpdates > 0) {
        failUpdates--;
        return Response.json({ message: "internal error" }, { status: 500 });
      }
      Object.assign(found, body as Partial<Preapproval>);
      return Response.json(found);
    }
    if (request.method === "GET" && match) {
      const found = preapprovals.get(decodeURIComponent(match[1]!));
      return found === undefined
        ? Response.json({ message: "not found" }, { status: 404 })
        : Response.json(found);
    }
    return Response.json({ message: "no route" }, { status: 404 });
  },
});

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext({
    PAYMENT_PROVIDER: "mercadopago",
    MERCADOPAGO_ACCESS_TOKEN: TOKEN,
    MERCADOPAGO_API_URL: `http://127.0.0.1:${standIn.port}`,
    PAYMENT_WEBHOOK_SECRET: "mp-webhook-secret-for-tests-0123456789",
  });
});
afterAll(async () => {
  await ctx.close();
  standIn.stop(true);
});

/** A notification as MercadoPago sends it: `data.id` in the query, signed with its X-Request-Id. */
const notify = (preapprovalId: string, signature?: string, requestId: string = crypto.randomUUID()) =>
  ctx.request(
    "POST",
    `/api/v1/billing/webhook/mercadopago?data.id=${preapprovalId}&type=subscription_preapproval`,
    {
      body: {
        id: Math.floor(Math.random() * 1e12),
        type: "subscription_preapproval",
        action: "updated",
        api_version: "v1",
        date_created: new Date().toISOString(),
        live_mode: false,
        user_id: "123",
        data: { id: preapprovalId },
      },
      headers: {
        "x-request-id": requestId,
        "x-signature":
          signature ??
          signatureHeader(
            "mp-webhook-secret-for-tests-0123456789",
            preapprovalId.toLowerCase(),
            undefined,
            requestId,
          ),
      },
    },
  );

describe("MercadoPago adapter", () => {
  test("creates a monthly preapproval and answers its init_point as the checkout URL", async () => {
    const tenant = await registerTenant(ctx);
    const res = await ctx.request("POST", "/api/v1/billing/create-subscription-session", {
      apiKey: tenant.apiKey,
      token: tenant.token,
      body: { plan: "PRO", successUrl: "https://shop.example.com/done" },
    });
    expect(res.status).toBe(200);
    expect(res.body.provider).toBe("mercadopago");
    expect(res.body.checkoutUrl).toStartWith("https://www.mercadopago.example/subscriptions/checkout");
    const call = received.find((r) => r.method === "POST" && r.path === "/preapproval")!;
    expect(call.auth).toBe(`Bearer ${TOKEN}`);
    expect(call.body).toEqual({
      reason: "PRO plan",
      external_reference: String(tenant.accountId),
      payer_email: tenant.email,
      back_url: "https://shop.example.com/done",
      auto_recurring: {
        frequency: 1,
        frequency_type: "months",
        transaction_amount: ctx.deps.plans.PRO!.priceMonthly,
        currency_id: "USD",
      },
    });
  });

  test("authorized → plan active with higher limits; cancelled → FREE, never locked out", async () => {
    const tenant = await registerTenant(ctx);
    const session = await ctx.request("POST", "/api/v1/billing/create-subscription-session", {
      apiKey: tenant.apiKey,
      token: tenant.token,
      body: { plan: "STARTER" },
    });
    const id = new URL(session.body.checkoutUrl).searchParams.get("preapproval_id")!;

    // Pending at the provider: the webhook changes nothing yet.
    expect((await notify(id)).status).toBe(200);
    let usage = await ctx.request("GET", "/api/v1/accounts/usage", { apiKey: tenant.apiKey });
    expect(usage.body.plan).toBe("FREE");

    preapprovals.get(id)!.status = "authorized";
    expect((await notify(id)).body).toEqual({ received: true, duplicate: false });
    usage = await ctx.request("GET", "/api/v1/accounts/usage", { apiKey: tenant.apiKey });
    expect(usage.body.plan).toBe("STARTER");
    expect(usage.body.subscriptionStatus).toBe("active");
    expect(usage.body.limits.requestsPerMinute).toBe(ctx.deps.plans.STARTER!.limits.requestsPerMinute);

    const summary = await ctx.request("GET", "/api/v1/usage/summary", { token: tenant.token });
    expect(summary.body.subscriptionRenewsAt).toBe(preapprovals.get(id)!.next_payment_date);

    const portal = await ctx.request("POST", "/api/v1/billing/create-portal-session", {
      apiKey: tenant.apiKey,
      token: tenant.token,
    });
    expect(portal.status).toBe(200);
    expect(portal.body.url).toBe(preapprovals.get(id)!.init_point);

    preapprovals.get(id)!.status = "cancelled";
    expect((await notify(id)).body).toEqual({ received: true, duplicate: false });
    const api = await ctx.request("GET", "/api/v1/sandbox/status", { apiKey: tenant.apiKey });
    expect(api.status).toBe(200);
    usage = await ctx.request("GET", "/api/v1/accounts/usage", { apiKey: tenant.apiKey });
    expect(usage.body).toMatchObject({ plan: "FREE", subscriptionStatus: "cancelled" });
  });

  test("checks MercadoPago's own manifest: a signature without the request id, or over another request id, is 401", async () => {
    const tenant = await registerTenant(ctx);
    const session = await ctx.request("POST", "/api/v1/billing/create-subscription-session", {
      apiKey: tenant.apiKey,
      token: tenant.token,
      body: { plan: "STARTER" },
    });
    const id = new URL(session.body.checkoutUrl).searchParams.get("preapproval_id")!;
    preapprovals.get(id)!.status = "authorized";
    const secret = "mp-webhook-secret-for-tests-0123456789";
    const withoutRequestId = signatureHeader(secret, id.toLowerCase());
    const otherRequest = signatureHeader(secret, id.toLowerCase(), undefined, "another-request");
    for (const signature of [withoutRequestId, otherRequest]) {
      const res = await notify(id, signature, "the-request");
      expect(res.status).toBe(401);
      expect(res.body.errorCode).toBe("INVALID_SIGNATURE");
    }
    const plan = async () =>
      (await ctx.request("GET", "/api/v1/accounts/usage", { apiKey: tenant.apiKey })).body.plan;
    expect(await plan()).toBe("FREE");
    // The manifest MercadoPago documents: id:{data.id};request-id:{x-request-id};ts:{ts};
    const ts = Math.floor(Date.now() / 1000);
    const { createHmac } = await import("node:crypto");
    const v1 = createHmac("sha256", secret)
      .update(`id:${id.toLowerCase()};request-id:the-request;ts:${ts};`)
      .digest("hex");
    expect((await notify(id, `ts=${ts},v1=${v1}`, "the-request")).status).toBe(200);
    expect(await plan()).toBe("STARTER");
  });

  test("an account without a subscription gets this service's portal page listing the plans", async () => {
    const tenant = await registerTenant(ctx);
    const portal = await ctx.request("POST", "/api/v1/billing/create-portal-session", {
      apiKey: tenant.apiKey,
      token: tenant.token,
    });
    expect(portal.status).toBe(200);
    expect(portal.body.provider).toBe("mercadopago");
    const page = await ctx.request("GET", new URL(portal.body.url).pathname);
    expect(page.status).toBe(200);
    expect(page.text).toContain("STARTER");
    expect(page.text).not.toContain("TEST MODE");
  });

  test("a webhook for a preapproval the provider does not know is acknowledged without effect", async () => {
    const res = await notify("unknown-preapproval");
    expect(res.status).toBe(200);
  });

  test("the local checkout pages are not served when MercadoPago is the provider", async () => {
    const res = await ctx.request("GET", "/api/v1/billing/local/checkout/loc_chk_anything");
    expect(res.status).toBe(404);
  });

  test("a plan change cancels the old preapproval (retried by the sweep when MercadoPago fails) and keeps the new plan", async () => {
    const tenant = await registerTenant(ctx);
    const subscribe = async (plan: string) => {
      const session = await ctx.request("POST", "/api/v1/billing/create-subscription-session", {
        apiKey: tenant.apiKey,
        token: tenant.token,
        body: { plan },
      });
      const id = new URL(session.body.checkoutUrl).searchParams.get("preapproval_id")!;
      preapprovals.get(id)!.status = "authorized";
      return id;
    };
    const starter = await subscribe("STARTER");
    await notify(starter);
    const pro = await subscribe("PRO");
    failUpdates = 1;
    expect((await notify(pro)).status).toBe(200);
    const plan = async () =>
      (await ctx.request("GET", "/api/v1/accounts/usage", { apiKey: tenant.apiKey })).body.plan;
    expect(await plan()).toBe("PRO");
    // MercadoPago refused the cancellation: the old preapproval still runs there, and its notifications
    // do not bring the old plan back.
    expect(preapprovals.get(starter)!.status).toBe("authorized");
    expect((await notify(starter)).status).toBe(200);
    expect(await plan()).toBe("PRO");

    expect(await cancelSuperseded({ ...ctx.deps, payments: ctx.deps.payments! })).toBe(1);
    const put = received.filter((r) => r.method === "PUT" && r.path === `/preapproval/${starter}`);
    expect(put.at(-1)!.body).toEqual({ status: "cancelled" });
    expect(put.at(-1)!.auth).toBe(`Bearer ${TOKEN}`);
    expect(preapprovals.get(starter)!.status).toBe("cancelled");
    await notify(starter);
    expect(await plan()).toBe("PRO");
    const usage = await ctx.request("GET", "/api/v1/accounts/usage", { apiKey: tenant.apiKey });
    expect(usage.body.subscriptionStatus).toBe("active");
    expect(received.some((r) => r.method === "PUT" && r.path === `/preapproval/${pro}`)).toBe(false);
  });
});
