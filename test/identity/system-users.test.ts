import { describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { sharedTestContext } from "../helpers/context";
import { expectAuthRequired } from "../helpers/security";
import { registerTenant, uniqueEmail } from "../helpers/tenant";
import { latestVerificationToken } from "./outbox";

describe("PUT /api/v1/system-users/me: guessing the current password", () => {
  test("counts in the login throttle: past its limit a session cannot try more passwords, the right one included", async () => {
    const ctx = await sharedTestContext();
    const tenant = await registerTenant(ctx);
    const guess = (currentPassword: string) =>
      ctx.request("PUT", "/api/v1/system-users/me", {
        token: tenant.token,
        body: { password: "taken over 12345", currentPassword },
      });
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await guess(`guess number ${i}`)).status);
    expect(statuses).toEqual([401, 401, 401, 401, 401]);
    const refused = await guess(tenant.password);
    expect(refused.status).toBe(429);
    expect(refused.body.errorCode).toBe("RATE_LIMITED");
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    // Nothing changed: the session and the old password still work.
    expect((await ctx.request("GET", "/api/v1/system-users/me", { token: tenant.token })).status).toBe(200);
  });
});

describe("GET /api/v1/system-users/me", () => {
  test("shows a FREE unverified user's 7-day grace period", async () => {
    const ctx = await sharedTestContext();
    const tenant = await registerTenant(ctx);
    const res = await ctx.request("GET", "/api/v1/system-users/me", { token: tenant.token });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      userId: tenant.userId,
      accountId: tenant.accountId,
      email: tenant.email,
      isOwner: true,
      isAdmin: false,
      plan: "FREE",
      emailVerified: false,
      gracePeriodDaysLeft: 7,
    });
    const endsIn = new Date(res.body.gracePeriodEndsAt).getTime() - new Date(res.body.createdAt).getTime();
    expect(endsIn).toBe(7 * 86_400_000);
  });

  test("needs a JWT: no credentials, garbage or an API key alone answer 401", async () => {
    const ctx = await sharedTestContext();
    const tenant = await registerTenant(ctx);
    await expectAuthRequired(ctx, "GET", "/api/v1/system-users/me", { jwtOnly: true });
    const withKey = await ctx.request("GET", "/api/v1/system-users/me", { apiKey: tenant.apiKey });
    expect(withKey.status).toBe(401);
  });
});

describe("PUT /api/v1/system-users/me", () => {
  test("changes the full name without touching anything else", async () => {
    const ctx = await sharedTestContext();
    const tenant = await registerTenant(ctx);
    const res = await ctx.request("PUT", "/api/v1/system-users/me", {
      token: tenant.token,
      body: { fullName: "Ada Lovelace" },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ fullName: "Ada Lovelace", email: tenant.email });
  });

  test("a password change needs the current password and revokes older tokens", async () => {
    const ctx = await sharedTestContext();
    const tenant = await registerTenant(ctx);
    const missing = await ctx.request("PUT", "/api/v1/system-users/me", {
      token: tenant.token,
      body: { password: "brand new password" },
    });
    expect(missing.status).toBe(422);
    const wrong = await ctx.request("PUT", "/api/v1/system-users/me", {
      token: tenant.token,
      body: { password: "brand new password", currentPassword: "not it at all" },
    });
    expect(wrong.status).toBe(401);
    expect(wrong.body.errorCode).toBe("INVALID_CREDENTIALS");
    const ok = await ctx.request("PUT", "/api/v1/system-users/me", {
      token: tenant.token,
      body: { password: "brand new password", currentPassword: tenant.password },
    });
    expect(ok.status).toBe(200);
    const old = await ctx.request("GET", "/api/v1/system-users/me", { token: tenant.token });
    expect(old.status).toBe(401);
    expect(old.body.errorCode).toBe("TOKEN_REVOKED");
    const login = await ctx.request("POST", "/api/v1/auth/token", {
      body: { email: tenant.email, password: "brand new password" },
    });
    expect(login.status).toBe(200);
    const fresh = await ctx.request("GET", "/api/v1/system-users/me", { token: login.body.accessToken });
    expect(fresh.status).toBe(200);
  });

  test("an e-mail already used by another user answers 409; unknown fields 422", async () => {
    const ctx = await sharedTestContext();
    const a = await registerTenant(ctx);
    const b = await registerTenant(ctx);
    const taken = await ctx.request("PUT", "/api/v1/system-users/me", {
      token: b.token,
      body: { email: a.email.toUpperCase(), currentPassword: b.password },
    });
    expect(taken.status).toBe(409);
    const unknown = await ctx.request("PUT", "/api/v1/system-users/me", {
      token: b.token,
      body: { isOwner: false },
    });
    expect(unknown.status).toBe(422);
  });

  test("a new e-mail is stored lower-cased and must be verified again, through the link mailed to it", async () => {
    const ctx = await sharedTestContext();
    const tenant = await registerTenant(ctx);
    await ctx.deps.database.rows(
      sql`update system_users set email_verified_at = now() where id = ${tenant.userId}`,
    );
    const email = uniqueEmail("New");
    const res = await ctx.request("PUT", "/api/v1/system-users/me", {
      token: tenant.token,
      body: { email, currentPassword: tenant.password },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ email: email.toLowerCase(), emailVerified: false });
    const token = latestVerificationToken(ctx, email.toLowerCase());
    const verified = await ctx.request("GET", "/api/v1/auth/verify-email", { query: { token } });
    expect(verified.status).toBeLessThan(400);
    const me = await ctx.request("GET", "/api/v1/system-users/me", { token: tenant.token });
    expect(me.body).toMatchObject({ email: email.toLowerCase(), emailVerified: true });
  });
});

describe("DELETE /api/v1/system-users/me", () => {
  test("revokes every token of the user; the last user's account is deactivated and its keys stop working", async () => {
    const ctx = await sharedTestContext();
    const tenant = await registerTenant(ctx);
    const res = await ctx.request("DELETE", "/api/v1/system-users/me", { token: tenant.token });
    expect(res.status).toBe(204);
    expect(res.text).toBe("");
    const after = await ctx.request("GET", "/api/v1/system-users/me", { token: tenant.token });
    expect(after.status).toBe(401);
    expect(after.body.errorCode).toBe("TOKEN_REVOKED");
    const key = await ctx.request("GET", "/api/v1/accounts/current", { apiKey: tenant.apiKey });
    expect(key.status).toBe(401);
    const login = await ctx.request("POST", "/api/v1/auth/token", {
      body: { email: tenant.email, password: tenant.password },
    });
    expect(login.status).toBe(401);
  });

  test("needs a JWT", async () => {
    const ctx = await sharedTestContext();
    await expectAuthRequired(ctx, "DELETE", "/api/v1/system-users/me", { jwtOnly: true });
  });
});
