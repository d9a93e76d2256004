import { describe, expect, test } from "bun:test";
import { sharedTestContext } from "../helpers/context";
import { expectNoSecrets } from "../helpers/security";
import { registerTenant, uniqueEmail } from "../helpers/tenant";

describe("POST /api/v1/auth/register", () => {
  test("creates account, owner, first secret key and a working token in one response", async () => {
    const ctx = await sharedTestContext();
    const email = uniqueEmail("Mixed.Case");
    const res = await ctx.request("POST", "/api/v1/auth/register", {
      body: { accountName: "Shop", email, password: "long enough pw" },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ tokenType: "bearer", isAdmin: false, emailVerificationRequired: true });
    expect(res.body.apiKey).toMatch(/^sk_live_[0-9A-Za-z]{32,}$/);
    expect(Number.isInteger(res.body.accountId) && Number.isInteger(res.body.userId)).toBe(true);
    const viaKey = await ctx.request("GET", "/api/v1/api-keys/current", { apiKey: res.body.apiKey });
    expect(viaKey.status).toBe(200);
    const viaToken = await ctx.request("GET", "/api/v1/api-keys/", { token: res.body.accessToken });
    expect(viaToken.status).toBe(200);
    expect(viaToken.body).toHaveLength(1);
  });

  test("a second sign-up with the same e-mail in another letter case answers 409 CONFLICT", async () => {
    const ctx = await sharedTestContext();
    const tenant = await registerTenant(ctx);
    const res = await ctx.request("POST", "/api/v1/auth/register", {
      body: { accountName: "Again", email: tenant.email.toUpperCase(), password: "another password" },
    });
    expect(res.status).toBe(409);
    expect(res.body.errorCode).toBe("CONFLICT");
  });

  test("passwords shorter than 8 characters, bad e-mails and unknown fields answer 422", async () => {
    const ctx = await sharedTestContext();
    for (const body of [
      { accountName: "S", email: uniqueEmail(), password: "short" },
      { accountName: "S", email: "not-an-email", password: "long enough" },
      { accountName: "S", email: uniqueEmail(), password: "long enough", isAdmin: true },
    ]) {
      const res = await ctx.request("POST", "/api/v1/auth/register", { body });
      expect(res.status).toBe(422);
      expect(res.body.errorCode).toBe("VALIDATION_ERROR");
    }
  });

  test("stores the password as argon2id and the key only as a SHA-256 hash", async () => {
    const ctx = await sharedTestContext();
    const tenant = await registerTenant(ctx);
    const [user] = await ctx.deps.database.rows<{ password_hash: string }>(
      (await import("drizzle-orm")).sql`select password_hash from system_users where id = ${tenant.userId}`,
    );
    expect(user?.password_hash.startsWith("$argon2id$")).toBe(true);
    const keys = await ctx.deps.database.rows<Record<string, unknown>>(
      (await import("drizzle-orm")).sql`select * from api_keys where account_id = ${tenant.accountId}`,
    );
    expectNoSecrets(JSON.stringify(keys), [tenant.apiKey, tenant.apiKey.slice(8)]);
    expect(keys[0]?.key_hash).toBe(new Bun.CryptoHasher("sha256").update(tenant.apiKey).digest("hex"));
  });

  test("never writes the password, key or token to the logs", async () => {
    const ctx = await sharedTestContext();
    const tenant = await registerTenant(ctx);
    await Bun.sleep(5);
    expectNoSecrets(ctx.logs.join("\n"), [tenant.password, tenant.apiKey, tenant.token]);
  });
});
