import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { loadConfig } from "../../src/config";
import { clientIp } from "../../src/modules/auth/client-ip";
import { createTestContext, sharedTestContext, type TestContext } from "../helpers/context";
import { registerTenant, uniqueEmail } from "../helpers/tenant";
import { latestVerificationToken } from "./outbox";

const register = (ctx: TestContext, headers: Record<string, string> = {}) =>
  ctx.request("POST", "/api/v1/auth/register", {
    body: { accountName: "Shop", email: uniqueEmail("signup"), password: "long enough password" },
    headers,
  });

const login = (ctx: TestContext, email: string, password: string, headers: Record<string, string> = {}) =>
  ctx.request("POST", "/api/v1/auth/token", { body: { email, password }, headers });

describe("sign-up throttle (SIGNUP_LIMIT_PER_HOUR)", () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await createTestContext({ SIGNUP_LIMIT_PER_HOUR: "3", TRUST_PROXY: "1" });
  });
  afterAll(() => ctx.close());

  test("a client past the hourly limit gets 429 RATE_LIMITED with Retry-After; another client is not affected", async () => {
    const a = { "x-forwarded-for": "198.51.100.10" };
    for (let i = 0; i < 3; i++) {
      const accepted = await register(ctx, a);
      expect(accepted.status).toBe(200);
      expect(accepted.headers.get("x-ratelimit-limit")).toBe("3");
      expect(accepted.headers.get("x-ratelimit-remaining")).toBe(String(2 - i));
      expect(Number(accepted.headers.get("x-ratelimit-reset"))).toBeGreaterThan(0);
    }
    const refused = await register(ctx, a);
    expect(refused.status).toBe(429);
    expect(refused.body.errorCode).toBe("RATE_LIMITED");
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(Number(refused.headers.get("retry-after"))).toBeLessThanOrEqual(3600);
    expect(refused.headers.get("x-ratelimit-limit")).toBe("3");
    expect(refused.headers.get("x-ratelimit-remaining")).toBe("0");
    expect(refused.headers.get("x-ratelimit-reset")).toBe(refused.headers.get("retry-after"));
    expect((await register(ctx, { "x-forwarded-for": "198.51.100.11" })).status).toBe(200);
  });

  test("40 concurrent sign-ups from one client: exactly the limit is accepted", async () => {
    const headers = { "x-forwarded-for": "198.51.100.20" };
    const results = await Promise.all(Array.from({ length: 40 }, () => register(ctx, headers)));
    expect(results.filter((r) => r.status === 200).length).toBe(3);
    expect(results.filter((r) => r.status === 429).length).toBe(37);
  });

  test("defaults to 20 per hour; 0 means no limit", () => {
    expect(loadConfig({ DATA_DIR: ctx.deps.config.dataDir }).signupLimitPerHour).toBe(20);
    expect(
      loadConfig({ DATA_DIR: ctx.deps.config.dataDir, SIGNUP_LIMIT_PER_HOUR: "0" }).signupLimitPerHour,
    ).toBe(0);
  });
});

describe("X-Forwarded-For is trusted only per TRUST_PROXY", () => {
  test("without TRUST_PROXY, rotating the header neither escapes the sign-up limit nor the login limit", async () => {
    const ctx = await createTestContext({ SIGNUP_LIMIT_PER_HOUR: "2", TRUST_PROXY: "" });
    try {
      expect(ctx.deps.config.trustProxy).toBeUndefined();
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++)
        statuses.push((await register(ctx, { "x-forwarded-for": `203.0.113.${i}` })).status);
      expect(statuses).toEqual([200, 200, 429, 429]);

      // 25 failures on fresh e-mails, each with a new forged address: the client limit (20) still holds.
      const results: number[] = [];
      for (let i = 0; i < 25; i++) {
        const res = await login(ctx, uniqueEmail(), "guessing-password", {
          "x-forwarded-for": `192.0.2.${i}`,
        });
        results.push(res.status);
      }
      expect(results.filter((s) => s === 401).length).toBe(20);
      expect(results.slice(20)).toEqual([429, 429, 429, 429, 429]);
    } finally {
      await ctx.close();
    }
  });

  const server = (address: string) => ({ requestIP: () => ({ address }) });
  const request = (forwarded?: string) =>
    new Request("http://localhost/", {
      headers: forwarded === undefined ? {} : { "x-forwarded-for": forwarded },
    });

  test("the client address: the socket's without TRUST_PROXY; N hops in with a count; the nearest untrusted with a list", () => {
    expect(clientIp(request("1.1.1.1"), server("10.0.0.5"), undefined)).toBe("10.0.0.5");
    expect(clientIp(request("1.1.1.1"), server("::ffff:10.0.0.5"), undefined)).toBe("10.0.0.5");
    // One proxy in front: it appended the client's address; anything the client wrote sits further left.
    expect(clientIp(request("6.6.6.6, 1.1.1.1"), server("10.0.0.5"), { hops: 1 })).toBe("1.1.1.1");
    expect(clientIp(request("6.6.6.6, 1.1.1.1, 10.0.0.4"), server("10.0.0.5"), { hops: 2 })).toBe("1.1.1.1");
    expect(clientIp(request(), server("10.0.0.5"), { hops: 1 })).toBe("10.0.0.5");
    const trusted = { addresses: ["10.0.0.5", "10.0.0.4"] };
    expect(clientIp(request("6.6.6.6, 1.1.1.1, 10.0.0.4"), server("10.0.0.5"), trusted)).toBe("1.1.1.1");
    // A connection that does not come from a trusted proxy: its header is ignored.
    expect(clientIp(request("6.6.6.6"), server("9.9.9.9"), trusted)).toBe("9.9.9.9");
  });

  test("TRUST_PROXY accepts a hop count or an address list; anything else stops start-up naming it", () => {
    const dataDir = ctxDir();
    expect(loadConfig({ DATA_DIR: dataDir, TRUST_PROXY: "2" }).trustProxy).toEqual({ hops: 2 });
    expect(loadConfig({ DATA_DIR: dataDir, TRUST_PROXY: "10.0.0.1, ::1" }).trustProxy).toEqual({
      addresses: ["10.0.0.1", "::1"],
    });
    expect(() => loadConfig({ DATA_DIR: dataDir, TRUST_PROXY: "proxy.local" })).toThrow(/TRUST_PROXY/);
  });
});

describe("login throttle reserves each attempt before the password check", () => {
  test("15 concurrent wrong passwords against a limit of 5: 5 are checked (401), 10 refused (429)", async () => {
    const ctx = await sharedTestContext();
    const tenant = await registerTenant(ctx);
    const headers = { "x-forwarded-for": "198.51.100.77" };
    const results = await Promise.all(
      Array.from({ length: 15 }, (_, i) => login(ctx, tenant.email, `wrong-${i}-password`, headers)),
    );
    expect(results.filter((r) => r.status === 401).length).toBe(5);
    expect(results.filter((r) => r.status === 429).length).toBe(10);
  });

  test("an attacker's failures do not lock the owner out from another address; a success does not count", async () => {
    const ctx = await sharedTestContext();
    const tenant = await registerTenant(ctx);
    for (let i = 0; i < 8; i++)
      await login(ctx, tenant.email, `wrong-${i}-pw`, { "x-forwarded-for": "192.0.2.200" });
    const owner = { "x-forwarded-for": "198.51.100.201" };
    for (let i = 0; i < 7; i++)
      expect((await login(ctx, tenant.email, tenant.password, owner)).status).toBe(200);
  });
});

describe("verification tokens are bound to the address they were sent to", () => {
  test("after an e-mail change, the token mailed to the old address verifies nothing", async () => {
    const ctx = await sharedTestContext();
    const tenant = await registerTenant(ctx);
    const oldToken = latestVerificationToken(ctx, tenant.email);
    const newEmail = uniqueEmail("moved");
    const changed = await ctx.request("PUT", "/api/v1/system-users/me", {
      token: tenant.token,
      body: { email: newEmail, currentPassword: tenant.password },
    });
    expect(changed.status).toBe(200);
    const res = await ctx.request("GET", "/api/v1/auth/verify-email", { query: { token: oldToken } });
    expect(res.status).toBe(404);
    const me = await ctx.request("GET", "/api/v1/system-users/me", { token: tenant.token });
    expect(me.body).toMatchObject({ email: newEmail, emailVerified: false });

    // The new address gets its own message at once, and that one works.
    const resend = await ctx.request("POST", "/api/v1/auth/send-verification-email", { token: tenant.token });
    expect(resend.status).toBe(202);
    const newToken = latestVerificationToken(ctx, newEmail);
    expect(
      (await ctx.request("GET", "/api/v1/auth/verify-email", { query: { token: newToken } })).status,
    ).toBe(200);
  });

  test("a token whose address no longer matches is refused even if its row survived", async () => {
    const ctx = await sharedTestContext();
    const tenant = await registerTenant(ctx);
    const token = latestVerificationToken(ctx, tenant.email);
    // Changed behind the service's back (no token clean-up): the hash still ties the token to the old address.
    const { sql } = await import("drizzle-orm");
    await ctx.deps.database.rows(
      sql`update system_users set email = ${uniqueEmail("raw")} where id = ${tenant.userId}`,
    );
    expect((await ctx.request("GET", "/api/v1/auth/verify-email", { query: { token } })).status).toBe(404);
  });
});

describe("the verification link in a browser", () => {
  test("answers a small HTML page when the client accepts text/html, JSON otherwise", async () => {
    const ctx = await sharedTestContext();
    const tenant = await registerTenant(ctx);
    const token = latestVerificationToken(ctx, tenant.email);
    const accept = { accept: "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8" };
    const page = await ctx.request("GET", "/api/v1/auth/verify-email", { query: { token }, headers: accept });
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toContain("text/html");
    expect(page.text).toContain("<h1>E-mail address verified</h1>");
    expect(page.headers.get("x-request-id")).toBeTruthy();
    const again = await ctx.request("GET", "/api/v1/auth/verify-email", {
      query: { token },
      headers: accept,
    });
    expect(again.status).toBe(404);
    expect(again.headers.get("content-type")).toContain("text/html");
    const json = await ctx.request("GET", "/api/v1/auth/verify-email", { query: { token } });
    expect(json.status).toBe(404);
    expect(json.body.errorCode).toBe("NOT_FOUND");
  });
});

function ctxDir(): string {
  return require("node:os").tmpdir();
}
