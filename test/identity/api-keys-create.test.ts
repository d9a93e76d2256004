import { describe, expect, test } from "bun:test";
import { sharedTestContext } from "../helpers/context";
import { expectAuthRequired, expectNoSecrets } from "../helpers/security";
import { ALLOWED_ORIGIN, createKey, registerTenant } from "../helpers/tenant";

describe("POST /api/v1/api-keys/", () => {
  test("creates a secret key returned once, with metadata and a working value", async () => {
    const ctx = await sharedTestContext();
    const tenant = await registerTenant(ctx);
    const res = await ctx.request("POST", "/api/v1/api-keys/", {
      token: tenant.token,
      body: { name: "Server" },
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ name: "Server", kind: "secret", scopes: [], allowedDomains: [] });
    expect(res.body.api_key).toMatch(/^sk_live_[0-9A-Za-z]{32,}$/);
    expect(res.body.api_key.startsWith(res.body.prefix)).toBe(true);
    expect(res.body.api_key.endsWith(res.body.lastChars)).toBe(true);
    expect(typeof res.body.message).toBe("string");
    const used = await ctx.request("GET", "/api/v1/api-keys/current", { apiKey: res.body.api_key });
    expect(used.status).toBe(200);
    expect(used.body.id).toBe(res.body.id);
    const list = await ctx.request("GET", "/api/v1/api-keys/", { token: tenant.token });
    expectNoSecrets(list.text + used.text, [res.body.api_key, tenant.apiKey]);
  });

  test("creates a publishable key with default scopes and lower-cased allowed domains", async () => {
    const ctx = await sharedTestContext();
    const tenant = await registerTenant(ctx);
    const res = await ctx.request("POST", "/api/v1/api-keys/", {
      token: tenant.token,
      body: {
        name: "Browser",
        kind: "publishable",
        allowedDomains: ["Shop.Example.com", "*.cdn.example.com"],
      },
    });
    expect(res.status).toBe(201);
    expect(res.body.api_key).toMatch(/^pk_live_[0-9A-Za-z]{32,}$/);
    expect(res.body.scopes).toEqual(["recommendations:read", "interactions:write"]);
    expect(res.body.allowedDomains).toEqual(["shop.example.com", "*.cdn.example.com"]);
  });

  test("publishable keys without allowedDomains, secret keys with scopes and bad domains answer 422", async () => {
    const ctx = await sharedTestContext();
    const tenant = await registerTenant(ctx);
    for (const body of [
      { name: "p", kind: "publishable" },
      { name: "s", kind: "secret", scopes: ["recommendations:read"] },
      { name: "p", kind: "publishable", allowedDomains: ["https://shop.com/"] },
      { name: "p", kind: "publishable", allowedDomains: ["shop.com"], scopes: ["admin:all"] },
      { name: "" },
    ]) {
      const res = await ctx.request("POST", "/api/v1/api-keys/", { token: tenant.token, body });
      expect(res.status).toBe(422);
      expect(res.body.errorCode).toBe("VALIDATION_ERROR");
    }
  });

  test("wildcards on public suffixes (*.com, *.co.uk, *.github.io) are refused with 422 naming the entry; *.shop.com is accepted", async () => {
    const ctx = await sharedTestContext();
    const tenant = await registerTenant(ctx);
    for (const domain of ["*.com", "*.co.uk", "*.github.io", "*.COM"]) {
      const res = await ctx.request("POST", "/api/v1/api-keys/", {
        token: tenant.token,
        body: { name: "wide", kind: "publishable", allowedDomains: ["shop.com", domain] },
      });
      expect(res.status).toBe(422);
      expect(res.body.detail[0].loc).toEqual(["body", "allowedDomains", "1"]);
      expect(res.body.detail[0].msg).toContain("public suffix");
    }
    const ok = await ctx.request("POST", "/api/v1/api-keys/", {
      token: tenant.token,
      body: { name: "narrow", kind: "publishable", allowedDomains: ["*.shop.co.uk", "*.shop.com"] },
    });
    expect(ok.status).toBe(201);
  });

  test("requires a user JWT: no token or only an API key answers 401 INVALID_TOKEN", async () => {
    const ctx = await sharedTestContext();
    const tenant = await registerTenant(ctx);
    await expectAuthRequired(ctx, "POST", "/api/v1/api-keys/", { body: { name: "x" }, jwtOnly: true });
    const withKey = await ctx.request("POST", "/api/v1/api-keys/", {
      apiKey: tenant.apiKey,
      body: { name: "x" },
    });
    expect(withKey.status).toBe(401);
    expect(withKey.body.errorCode).toBe("INVALID_TOKEN");
  });

  test("authentication is checked before the body: no token and a bad body answers 401, not 422", async () => {
    const ctx = await sharedTestContext();
    const res = await ctx.request("POST", "/api/v1/api-keys/", { body: { bogus: true } });
    expect(res.status).toBe(401);
  });

  test("a publishable key cannot create or list keys, even from its allowed origin", async () => {
    const ctx = await sharedTestContext();
    const tenant = await registerTenant(ctx);
    const { apiKey } = await createKey(ctx, tenant.token, { kind: "publishable" });
    const list = await ctx.request("GET", "/api/v1/api-keys/", {
      apiKey,
      headers: { origin: ALLOWED_ORIGIN },
    });
    expect(list.status).toBe(403);
    expect(list.body.errorCode).toBe("INSUFFICIENT_SCOPE");
  });
});
