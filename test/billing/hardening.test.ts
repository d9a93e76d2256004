import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { signatureHeader } from "../../src/modules/billing/signature";
import { createTestContext, sharedTestContext, type TestContext } from "../helpers/context";
import { registerTenant, type Tenant } from "../helpers/tenant";

const both = (tenant: Tenant) => ({ apiKey: tenant.apiKey, token: tenant.token });

describe("billing without PAYMENT_PROVIDER", () => {
  test("session routes answer 503 BILLING_NOT_CONFIGURED; the local pages and webhook do not exist", async () => {
    const ctx = await sharedTestContext();
    expect(ctx.deps.config.paymentProvider).toBeUndefined();
    const tenant = await registerTenant(ctx);
    for (const path of ["create-subscription-session", "create-checkout-session"]) {
      const res = await ctx.request("POST", `/api/v1/billing/${path}`, {
        ...both(tenant),
        body: { plan: "PRO" },
      });
      expect(res.status).toBe(503);
      expect(res.body.errorCode).toBe("BILLING_NOT_CONFIGURED");
    }
    const portal = await ctx.request("POST", "/api/v1/billing/create-portal-session", both(tenant));
    expect(portal.status).toBe(503);
    expect(portal.body.errorCode).toBe("BILLING_NOT_CONFIGURED");
    expect((await ctx.request("GET", "/api/v1/billing/local/checkout/loc_chk_anything")).status).toBe(404);
    const webhook = await ctx.request("POST", "/api/v1/billing/webhook/local", {
      body: { id: "evt_1", type: "subscription_preapproval", data: { id: "x" } },
      headers: { "x-signature": signatureHeader(ctx.deps.config.paymentWebhookSecret, "x") },
    });
    expect(webhook.status).toBe(404);
    const usage = await ctx.request("GET", "/api/v1/accounts/usage", { apiKey: tenant.apiKey });
    expect(usage.body.plan).toBe("FREE");
  });

  test("still authenticates first: no credentials answer 401", async () => {
    const ctx = await sharedTestContext();
    const res = await ctx.request("POST", "/api/v1/billing/create-subscription-session", {
      body: { plan: "PRO" },
    });
    expect(res.status).toBe(401);
  });
});

describe("billing in local test mode", () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await createTestContext({ PAYMENT_PROVIDER: "local" });
  });
  afterAll(() => ctx.close());

  test("successUrl, cancelUrl and returnUrl must be absolute https URLs (http only for localhost), else 422", async () => {
    const tenant = await registerTenant(ctx);
    const bad = [
      "javascript:alert(document.cookie)",
      "http://evil.example.com/",
      "/relative/path",
      "data:text/html,hi",
      "ftp://shop.example.com/",
    ];
    for (const url of bad) {
      for (const field of ["successUrl", "cancelUrl"]) {
        const res = await ctx.request("POST", "/api/v1/billing/create-subscription-session", {
          ...both(tenant),
          body: { plan: "PRO", [field]: url },
        });
        expect(res.status).toBe(422);
        expect(res.body.errorCode).toBe("VALIDATION_ERROR");
      }
      const portal = await ctx.request("POST", "/api/v1/billing/create-portal-session", {
        ...both(tenant),
        body: { returnUrl: url },
      });
      expect(portal.status).toBe(422);
    }
    for (const url of ["https://shop.example.com/done", "http://localhost:3000/done"]) {
      const res = await ctx.request("POST", "/api/v1/billing/create-checkout-session", {
        ...both(tenant),
        body: { plan: "PRO", successUrl: url, cancelUrl: url },
      });
      expect(res.status).toBe(200);
    }
  });

  test("the checkout page says it is test mode", async () => {
    const tenant = await registerTenant(ctx);
    const session = await ctx.request("POST", "/api/v1/billing/create-subscription-session", {
      ...both(tenant),
      body: { plan: "STARTER" },
    });
    const page = await ctx.request("GET", new URL(session.body.checkoutUrl).pathname);
    expect(page.text).toContain("TEST MODE");
    expect(ctx.logs.some((line) => line.includes("test mode"))).toBe(true);
  });

  test("a webhook body over 64 KB answers 413, with or without a declared length", async () => {
    const padding = "x".repeat(65 * 1024);
    const body = JSON.stringify({
      id: "evt_big",
      type: "subscription_preapproval",
      data: { id: "x" },
      padding,
    });
    const declared = await ctx.app.handle(
      new Request("http://localhost/api/v1/billing/webhook/local", {
        method: "POST",
        headers: { "content-type": "application/json", "content-length": String(body.length) },
        body,
      }),
    );
    expect(declared.status).toBe(413);
    expect(((await declared.json()) as { errorCode: string }).errorCode).toBe("PAYLOAD_TOO_LARGE");
    const chunked = await ctx.app.handle(
      new Request("http://localhost/api/v1/billing/webhook/local", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: new Blob([body]).stream(),
      }),
    );
    expect(chunked.status).toBe(413);
    // Just under the cap is read (and refused for its signature, not its size).
    const small = await ctx.request("POST", "/api/v1/billing/webhook/local", {
      body: { id: "evt_small", type: "x", data: { id: "x" }, padding: "x".repeat(60 * 1024) },
    });
    expect(small.status).toBe(401);
  });
});
