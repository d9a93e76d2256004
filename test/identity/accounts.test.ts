import { describe, expect, test } from "bun:test";
import { createTestContext, sharedTestContext, type TestContext } from "../helpers/context";
import { expectAuthRequired, expectPublishableRefused } from "../helpers/security";
import { registerTenant, uniqueEmail } from "../helpers/tenant";
import { latestVerificationToken } from "./outbox";

describe("GET /api/v1/accounts/current", () => {
  test("returns the caller's account with a key or a token, under the specification's field names", async () => {
    const ctx = await sharedTestContext();
    const tenant = await registerTenant(ctx, { accountName: "Acme" });
    for (const auth of [{ apiKey: tenant.apiKey }, { token: tenant.token }]) {
      const res = await ctx.request("GET", "/api/v1/accounts/current", auth);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        accountId: tenant.accountId,
        name: "Acme",
        is_active: true,
        onboarding_checklist_status: {},
        payment_customer_id: null,
        plan: "FREE",
        subscriptionStatus: "none",
        subscriptionRenewsAt: null,
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
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
  test("a regular user may change the onboarding checklist; PATCH merges keys into the stored object", async () => {
    const ctx = await sharedTestContext();
    const tenant = await registerTenant(ctx);
    const first = await ctx.request("PATCH", "/api/v1/accounts/current", {
      token: tenant.token,
      body: { onboarding_checklist_status: { catalogue: true, step: 1 } },
    });
    expect(first.status).toBe(200);
    expect(first.body.onboarding_checklist_status).toEqual({ catalogue: true, step: 1 });
    const second = await ctx.request("PATCH", "/api/v1/accounts/current", {
      apiKey: tenant.apiKey,
      body: { onboarding_checklist_status: { training: true, step: 2 } },
    });
    expect(second.status).toBe(200);
    expect(second.body.onboarding_checklist_status).toEqual({ catalogue: true, training: true, step: 2 });
    const read = await ctx.request("GET", "/api/v1/accounts/current", { apiKey: tenant.apiKey });
    expect(read.body.onboarding_checklist_status).toEqual({ catalogue: true, training: true, step: 2 });
  });

  test("a merge that would grow the checklist past 16 KB answers 422 and changes nothing", async () => {
    const ctx = await sharedTestContext();
    const tenant = await registerTenant(ctx);
    const half = "x".repeat(9_000);
    const ok = await ctx.request("PATCH", "/api/v1/accounts/current", {
      token: tenant.token,
      body: { onboarding_checklist_status: { a: half } },
    });
    expect(ok.status).toBe(200);
    const tooBig = await ctx.request("PATCH", "/api/v1/accounts/current", {
      token: tenant.token,
      body: { onboarding_checklist_status: { b: half } },
    });
    expect(tooBig.status).toBe(422);
    const read = await ctx.request("GET", "/api/v1/accounts/current", { token: tenant.token });
    expect(Object.keys(read.body.onboarding_checklist_status)).toEqual(["a"]);
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
    expect(account.body.is_active).toBe(true);
  });

  test("a regular user naming an admin-only field gets 403 ADMIN_REQUIRED, whatever its value or the rest of the body", async () => {
    const ctx = await sharedTestContext();
    const tenant = await registerTenant(ctx);
    const bodies = [
      { name: "" },
      { name: 5 },
      { is_active: "yes" },
      { payment_customer_id: "" },
      { name: "Renamed", unknown: 1 },
      { is_active: false, onboarding_checklist_status: "not an object" },
    ];
    for (const body of bodies) {
      for (const auth of [{ token: tenant.token }, { apiKey: tenant.apiKey }]) {
        const res = await ctx.request("PATCH", "/api/v1/accounts/current", { ...auth, body });
        expect({ body, status: res.status, code: res.body.errorCode }).toEqual({
          body,
          status: 403,
          code: "ADMIN_REQUIRED",
        });
      }
    }
    const account = await ctx.request("GET", "/api/v1/accounts/current", { token: tenant.token });
    expect(account.body).toMatchObject({ name: "Test shop", is_active: true, payment_customer_id: null });
  });

  test("a regular user's body naming no admin-only field is validated as usual (422)", async () => {
    const ctx = await sharedTestContext();
    const tenant = await registerTenant(ctx);
    for (const body of [{ onboarding_checklist_status: 5 }, { unknown: 1 }, "{not json", "[]"]) {
      const res = await ctx.request("PATCH", "/api/v1/accounts/current", { token: tenant.token, body });
      expect({ body, status: res.status, code: res.body.errorCode }).toEqual({
        body,
        status: 422,
        code: "VALIDATION_ERROR",
      });
    }
  });

  test("unknown fields (the old camelCase names included) answer 422", async () => {
    const ctx = await sharedTestContext();
    const tenant = await registerTenant(ctx);
    for (const body of [{ plan: "ENTERPRISE" }, { onboardingChecklistStatus: { a: 1 } }]) {
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

describe("PUT /api/v1/accounts/current", () => {
  test("anyone but a platform administrator gets 403 ADMIN_REQUIRED, whatever the body holds", async () => {
    const ctx = await sharedTestContext();
    const tenant = await registerTenant(ctx);
    const bodies = [
      { name: "Mine", is_active: true },
      {},
      { name: "" },
      { unknown: 1 },
      "{not json",
      `{"a":${"[".repeat(40)}${"]".repeat(40)}}`,
      undefined,
    ];
    for (const body of bodies) {
      for (const auth of [{ token: tenant.token }, { apiKey: tenant.apiKey }]) {
        const res = await ctx.request("PUT", "/api/v1/accounts/current", { ...auth, body });
        expect({ body, status: res.status, code: res.body.errorCode }).toEqual({
          body,
          status: 403,
          code: "ADMIN_REQUIRED",
        });
      }
    }
  });

  test("needs credentials first, whatever the body holds", async () => {
    const ctx = await sharedTestContext();
    for (const body of [{ name: "" }, "{not json"]) {
      await expectAuthRequired(ctx, "PUT", "/api/v1/accounts/current", { body });
    }
  });
});

describe("platform administrators (ADMIN_EMAILS)", () => {
  let ctx: TestContext;
  const adminEmail = uniqueEmail("admin");

  test("once verified, are flagged isAdmin and may PATCH and PUT name, is_active and the customer id", async () => {
    ctx = await createTestContext({ ADMIN_EMAILS: adminEmail });
    try {
      const admin = await registerTenant(ctx, { email: adminEmail });
      const verified = await ctx.request("GET", "/api/v1/auth/verify-email", {
        query: { token: latestVerificationToken(ctx, adminEmail) },
      });
      expect(verified.status).toBe(200);
      const me = await ctx.request("GET", "/api/v1/system-users/me", { token: admin.token });
      expect(me.body.isAdmin).toBe(true);
      const patched = await ctx.request("PATCH", "/api/v1/accounts/current", {
        token: admin.token,
        body: { name: "Platform", payment_customer_id: "cus_123" },
      });
      expect(patched.status).toBe(200);
      expect(patched.body).toMatchObject({ name: "Platform", payment_customer_id: "cus_123" });
      const incomplete = await ctx.request("PUT", "/api/v1/accounts/current", {
        token: admin.token,
        body: { name: "Only name" },
      });
      expect(incomplete.status).toBe(422);
      // An administrator is past the permission check: what is wrong with the body is then said.
      for (const [method, body] of [
        ["PUT", { name: "", is_active: true }],
        ["PUT", "{not json"],
        ["PATCH", { name: 5 }],
        ["PATCH", { payment_customer_id: "cus_1", unknown: 1 }],
      ] as const) {
        const invalid = await ctx.request(method, "/api/v1/accounts/current", { token: admin.token, body });
        expect({ method, body, status: invalid.status }).toEqual({ method, body, status: 422 });
      }
      const put = await ctx.request("PUT", "/api/v1/accounts/current", {
        token: admin.token,
        body: { name: "Replaced", is_active: true, onboarding_checklist_status: { done: true } },
      });
      expect(put.status).toBe(200);
      expect(put.body).toMatchObject({
        name: "Replaced",
        is_active: true,
        onboarding_checklist_status: { done: true },
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

describe("admin rights need the verified address (ADMIN_EMAILS)", () => {
  test("registering a listed address gives no admin rights until it is verified", async () => {
    const adminEmail = uniqueEmail("admin");
    const ctx = await createTestContext({ ADMIN_EMAILS: adminEmail });
    try {
      const squatter = await registerTenant(ctx, { email: adminEmail });
      const register = await ctx.request("POST", "/api/v1/auth/token", {
        body: { email: adminEmail, password: squatter.password },
      });
      expect(register.body.isAdmin).toBe(false);
      const me = await ctx.request("GET", "/api/v1/system-users/me", { token: squatter.token });
      expect(me.body).toMatchObject({ emailVerified: false, isAdmin: false });
      const refused = await ctx.request("PATCH", "/api/v1/accounts/current", {
        token: squatter.token,
        body: { name: "Taken over" },
      });
      expect(refused.status).toBe(403);
      expect(refused.body.errorCode).toBe("ADMIN_REQUIRED");
    } finally {
      await ctx.close();
    }
  });

  test("changing one's e-mail to a listed address gives no admin rights while unverified", async () => {
    const adminEmail = uniqueEmail("admin");
    const ctx = await createTestContext({ ADMIN_EMAILS: adminEmail });
    try {
      const user = await registerTenant(ctx);
      const changed = await ctx.request("PUT", "/api/v1/system-users/me", {
        token: user.token,
        body: { email: adminEmail, currentPassword: user.password },
      });
      expect(changed.status).toBe(200);
      expect(changed.body).toMatchObject({ email: adminEmail, emailVerified: false, isAdmin: false });
      const refused = await ctx.request("PUT", "/api/v1/accounts/current", {
        token: user.token,
        body: { name: "Mine", is_active: true },
      });
      expect(refused.status).toBe(403);
      expect(refused.body.errorCode).toBe("ADMIN_REQUIRED");
      const login = await ctx.request("POST", "/api/v1/auth/token", {
        body: { email: adminEmail, password: user.password },
      });
      expect(login.body.isAdmin).toBe(false);
    } finally {
      await ctx.close();
    }
  });
});
