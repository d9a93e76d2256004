import { describe, expect, test } from "bun:test";
import { createTestContext, sharedTestContext, type TestContext } from "../helpers/context";
import { expectAuthRequired, expectPublishableRefused } from "../helpers/security";
import { registerTenant, uniqueEmail } from "../helpers/tenant";

describe("GET /api/v1/accounts/current", () => {
  test("returns the caller's account with a key or a token", async () => {
    const ctx = await sharedTestContext();
    const tenant = await registerTenant(ctx, { accountName: "Acme" });
    for (const auth of [{ apiKey: tenant.apiKey }, { token: tenant.token }]) {
      const res = await ctx.request("GET", "/api/v1/accounts/current", auth);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        accountId: tenant.accountId,
        name: "Acme",
        isActive: true,
        plan: "FREE",
        subscriptionStatus: "none",
        onboardingChecklistStatus: {},
        paymentCustomerId: null,
      });
    }
  });

  test("needs credentials and refuses publishable keys", async () => {
    const ctx = await sharedTestContext();
    await expectAuthRequired(ctx, "GET", "/api/v1/accounts/current");
    await expectPublishableRefused(ctx, "GET", "/api/v1/accounts/current");
  });
});

describe("PATCH /api/v1/accounts/current", () => {
  test("a regular user may change the onboarding checklist (snake_case or camelCase)", async () => {
    const ctx = await sharedTestContext();
    const tenant = await registerTenant(ctx);
    const snake = await ctx.request("PATCH", "/api/v1/accounts/current", {
      token: tenant.token,
      body: { onboarding_checklist_status: { catalogue: true } },
    });
    expect(snake.status).toBe(200);
    expect(snake.body.onboardingChecklistStatus).toEqual({ catalogue: true });
    const camel = await ctx.request("PATCH", "/api/v1/accounts/current", {
      apiKey: tenant.apiKey,
      body: { onboardingChecklistStatus: { catalogue: true, training: true } },
    });
    expect(camel.body.onboardingChecklistStatus).toEqual({ catalogue: true, training: true });
  });

  test("admin-only fields answer 403 ADMIN_REQUIRED for a regular user", async () => {
    const ctx = await sharedTestContext();
    const tenant = await registerTenant(ctx);
    for (const body of [{ name: "Renamed" }, { is_active: false }, { payment_customer_id: "cus_1" }]) {
      const res = await ctx.request("PATCH", "/api/v1/accounts/current", { token: tenant.token, body });
      expect(res.status).toBe(403);
      expect(res.body.errorCode).toBe("ADMIN_REQUIRED");
    }
    const account = await ctx.request("GET", "/api/v1/accounts/current", { token: tenant.token });
    expect(account.body.isActive).toBe(true);
  });

  test("unknown fields and conflicting spellings answer 422", async () => {
    const ctx = await sharedTestContext();
    const tenant = await registerTenant(ctx);
    for (const body of [{ plan: "ENTERPRISE" }, { is_active: true, isActive: false }]) {
      const res = await ctx.request("PATCH", "/api/v1/accounts/current", { token: tenant.token, body });
      expect(res.status).toBe(422);
    }
  });

  test("needs credentials and refuses publishable keys", async () => {
    const ctx = await sharedTestContext();
    await expectAuthRequired(ctx, "PATCH", "/api/v1/accounts/current", { body: {} });
    await expectPublishableRefused(ctx, "PATCH", "/api/v1/accounts/current", { body: {} });
  });
});

describe("platform administrators (ADMIN_EMAILS)", () => {
  let ctx: TestContext;
  const adminEmail = uniqueEmail("admin");

  test("are flagged isAdmin and may PATCH and PUT name, is_active and the customer id", async () => {
    ctx = await createTestContext({ ADMIN_EMAILS: adminEmail });
    try {
      const admin = await registerTenant(ctx, { email: adminEmail });
      const me = await ctx.request("GET", "/api/v1/system-users/me", { token: admin.token });
      expect(me.body.isAdmin).toBe(true);
      const patched = await ctx.request("PATCH", "/api/v1/accounts/current", {
        token: admin.token,
        body: { name: "Platform", payment_customer_id: "cus_123" },
      });
      expect(patched.status).toBe(200);
      expect(patched.body).toMatchObject({ name: "Platform", paymentCustomerId: "cus_123" });
      const incomplete = await ctx.request("PUT", "/api/v1/accounts/current", {
        token: admin.token,
        body: { name: "Only name" },
      });
      expect(incomplete.status).toBe(422);
      const put = await ctx.request("PUT", "/api/v1/accounts/current", {
        token: admin.token,
        body: { name: "Replaced", is_active: true, onboarding_checklist_status: { done: true } },
      });
      expect(put.status).toBe(200);
      expect(put.body).toMatchObject({
        name: "Replaced",
        isActive: true,
        onboardingChecklistStatus: { done: true },
      });

      const regular = await registerTenant(ctx);
      const refused = await ctx.request("PUT", "/api/v1/accounts/current", {
        token: regular.token,
        body: { name: "Mine", is_active: true },
      });
      expect(refused.status).toBe(403);
      expect(refused.body.errorCode).toBe("ADMIN_REQUIRED");
      const viaKey = await ctx.request("PUT", "/api/v1/accounts/current", {
        apiKey: admin.apiKey,
        body: { name: "Via key", is_active: true },
      });
      expect(viaKey.status).toBe(403);

      // Deactivation: the account's keys and tokens answer 403 from the next request on.
      const off = await ctx.request("PATCH", "/api/v1/accounts/current", {
        token: admin.token,
        body: { is_active: false },
      });
      expect(off.status).toBe(200);
      // Twice each: the second request meets the deactivated account already in memory.
      for (const auth of [{ apiKey: admin.apiKey }, { token: admin.token }, { apiKey: admin.apiKey }]) {
        const res = await ctx.request("GET", "/api/v1/accounts/current", auth);
        expect(res.status).toBe(403);
        expect(res.body.errorCode).toBe("FORBIDDEN");
      }
    } finally {
      await ctx.close();
    }
  });
});
