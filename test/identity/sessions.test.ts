import { describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { sharedTestContext } from "../helpers/context";
import { expectAuthRequired } from "../helpers/security";
import { registerTenant } from "../helpers/tenant";
import { latestVerificationToken } from "./outbox";

describe("POST /api/v1/auth/logout", () => {
  test("revokes the presented token while another session of the same user keeps working", async () => {
    const ctx = await sharedTestContext();
    const tenant = await registerTenant(ctx);
    const login = await ctx.request("POST", "/api/v1/auth/token", {
      body: { email: tenant.email, password: tenant.password },
    });
    const out = await ctx.request("POST", "/api/v1/auth/logout", { token: tenant.token });
    expect(out.status).toBe(200);
    expect(typeof out.body.message).toBe("string");
    const after = await ctx.request("GET", "/api/v1/system-users/me", { token: tenant.token });
    expect(after.status).toBe(401);
    expect(after.body.errorCode).toBe("TOKEN_REVOKED");
    const other = await ctx.request("GET", "/api/v1/system-users/me", { token: login.body.accessToken });
    expect(other.status).toBe(200);
  });

  test("needs a bearer token: none, garbage or only an API key answers 401", async () => {
    const ctx = await sharedTestContext();
    const tenant = await registerTenant(ctx);
    await expectAuthRequired(ctx, "POST", "/api/v1/auth/logout", { jwtOnly: true });
    const withKey = await ctx.request("POST", "/api/v1/auth/logout", { apiKey: tenant.apiKey });
    expect(withKey.status).toBe(401);
  });

  test("a forged signature or an alg=none token is 401 INVALID_TOKEN", async () => {
    const ctx = await sharedTestContext();
    const tenant = await registerTenant(ctx);
    const [header, payload] = tenant.token.split(".");
    const forged = `${header}.${payload}.${"A".repeat(43)}`;
    const res = await ctx.request("POST", "/api/v1/auth/logout", { token: forged });
    expect(res.status).toBe(401);
    expect(res.body.errorCode).toBe("INVALID_TOKEN");
    const none = `${Buffer.from('{"alg":"none"}').toString("base64url")}.${payload}.`;
    const unsigned = await ctx.request("POST", "/api/v1/auth/logout", { token: none });
    expect(unsigned.body.errorCode).toBe("INVALID_TOKEN");
  });
});

describe("e-mail verification", () => {
  test("the sign-up mail's link verifies the e-mail once; a second use answers 404", async () => {
    const ctx = await sharedTestContext();
    const tenant = await registerTenant(ctx);
    const token = latestVerificationToken(ctx, tenant.email);
    const ok = await ctx.request("GET", "/api/v1/auth/verify-email", { query: { token } });
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({ message: expect.any(String), emailVerified: true });
    const me = await ctx.request("GET", "/api/v1/system-users/me", { token: tenant.token });
    expect(me.body).toMatchObject({
      emailVerified: true,
      gracePeriodEndsAt: null,
      gracePeriodDaysLeft: null,
    });
    const again = await ctx.request("GET", "/api/v1/auth/verify-email", { query: { token } });
    expect(again.status).toBe(404);
    expect(again.body.errorCode).toBe("NOT_FOUND");
  });

  test("tokens are stored hashed and an expired token answers 404", async () => {
    const ctx = await sharedTestContext();
    const tenant = await registerTenant(ctx);
    const token = latestVerificationToken(ctx, tenant.email);
    const stored = await ctx.deps.database.rows<{ token_hash: string }>(
      sql`select token_hash from email_verification_tokens where user_id = ${tenant.userId}`,
    );
    expect(stored.some((row) => row.token_hash === token)).toBe(false);
    await ctx.deps.database.rows(
      sql`update email_verification_tokens set expires_at = now() - interval '1 second' where user_id = ${tenant.userId}`,
    );
    const res = await ctx.request("GET", "/api/v1/auth/verify-email", { query: { token } });
    expect(res.status).toBe(404);
  });

  test("missing token answers 422; an unknown one 404", async () => {
    const ctx = await sharedTestContext();
    expect((await ctx.request("GET", "/api/v1/auth/verify-email")).status).toBe(422);
    const unknown = await ctx.request("GET", "/api/v1/auth/verify-email", { query: { token: "nope" } });
    expect(unknown.status).toBe(404);
  });

  test("send-verification-email answers 202, writes a new mail and logs its link (outbox mode); again within a minute: 202, nothing sent", async () => {
    const ctx = await sharedTestContext();
    const tenant = await registerTenant(ctx);
    await ctx.deps.database.rows(
      sql`update email_verification_tokens set created_at = now() - interval '2 minutes' where user_id = ${tenant.userId}`,
    );
    const first = latestVerificationToken(ctx, tenant.email);
    const res = await ctx.request("POST", "/api/v1/auth/send-verification-email", { token: tenant.token });
    expect(res.status).toBe(202);
    const second = latestVerificationToken(ctx, tenant.email);
    expect(second).not.toBe(first);
    expect(ctx.logs.some((line) => line.includes(second) && line.includes('"level":"info"'))).toBe(true);
    const tooSoon = await ctx.request("POST", "/api/v1/auth/send-verification-email", {
      token: tenant.token,
    });
    // A "resend" click within the minute is not an error, and sends nothing new.
    expect(tooSoon.status).toBe(202);
    expect(tooSoon.body.message).toContain("less than a minute ago");
    expect(latestVerificationToken(ctx, tenant.email)).toBe(second);
  });

  test("send-verification-email needs the user's JWT (an API key is not enough); a verified user gets 202 and no mail", async () => {
    const ctx = await sharedTestContext();
    const tenant = await registerTenant(ctx);
    await expectAuthRequired(ctx, "POST", "/api/v1/auth/send-verification-email", { jwtOnly: true });
    const withKey = await ctx.request("POST", "/api/v1/auth/send-verification-email", {
      apiKey: tenant.apiKey,
    });
    expect(withKey.status).toBe(401);
    const token = latestVerificationToken(ctx, tenant.email);
    await ctx.request("GET", "/api/v1/auth/verify-email", { query: { token } });
    const verified = await ctx.request("POST", "/api/v1/auth/send-verification-email", {
      token: tenant.token,
    });
    expect(verified.status).toBe(202);
    expect(verified.body.message).toContain("already verified");
  });
});
