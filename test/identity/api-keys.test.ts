import { describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { LastUsedBuffer } from "../../src/modules/api-keys/last-used-buffer";
import { sharedTestContext } from "../helpers/context";
import {
  expectAuthRequired,
  expectNoSecrets,
  expectOtherTenantNotFound,
  expectPublishableRefused,
} from "../helpers/security";
import { createKey, registerTenant } from "../helpers/tenant";

describe("GET /api/v1/api-keys/ and /current", () => {
  test("lists active keys as metadata only, never their values", async () => {
    const ctx = await sharedTestContext();
    const tenant = await registerTenant(ctx);
    const extra = await createKey(ctx, tenant.token, { name: "Worker" });
    const browser = await createKey(ctx, tenant.token, { kind: "publishable", name: "Web" });
    const res = await ctx.request("GET", "/api/v1/api-keys/", { apiKey: tenant.apiKey });
    expect(res.status).toBe(200);
    expect(res.body.map((k: { name: string }) => k.name)).toEqual(["Default secret key", "Worker", "Web"]);
    expect(Object.keys(res.body[0]).sort()).toEqual(
      [
        "allowedDomains",
        "created_at",
        "id",
        "kind",
        "lastChars",
        "last_used_at",
        "name",
        "prefix",
        "scopes",
      ].sort(),
    );
    expectNoSecrets(res.text, [tenant.apiKey, extra.apiKey, browser.apiKey]);
    await Bun.sleep(5);
    expectNoSecrets(ctx.logs.join("\n"), [tenant.apiKey, extra.apiKey, browser.apiKey, tenant.token]);
  });

  test("/current shows the key in use with its last use; with a JWT only it answers 404", async () => {
    const ctx = await sharedTestContext();
    const tenant = await registerTenant(ctx);
    const res = await ctx.request("GET", "/api/v1/api-keys/current", { apiKey: tenant.apiKey });
    expect(res.status).toBe(200);
    expect(res.body.name).toBe("Default secret key");
    expect(res.body.last_used_at).not.toBeNull();
    const jwtOnly = await ctx.request("GET", "/api/v1/api-keys/current", { token: tenant.token });
    expect(jwtOnly.status).toBe(404);
  });

  test("last_used_at is kept in memory and written for many keys in one flush", async () => {
    const ctx = await sharedTestContext();
    const tenant = await registerTenant(ctx);
    const one = await createKey(ctx, tenant.token);
    const two = await createKey(ctx, tenant.token);
    // A buffer of its own (no timer), so the shared one's periodic flush cannot interfere.
    const buffer = new LastUsedBuffer(ctx.deps.database, ctx.deps.logger);
    buffer.touch(one.id);
    buffer.touch(two.id);
    const read = () =>
      ctx.deps.database.rows<{ last_used_at: unknown }>(
        sql`select last_used_at from api_keys where id in (${one.id}, ${two.id})`,
      );
    expect((await read()).every((row) => row.last_used_at === null)).toBe(true);
    await buffer.flush();
    expect((await read()).every((row) => row.last_used_at !== null)).toBe(true);
    expect(buffer.pending(one.id)).toBeUndefined();
  });

  test("need credentials and refuse publishable keys", async () => {
    const ctx = await sharedTestContext();
    await expectAuthRequired(ctx, "GET", "/api/v1/api-keys/");
    await expectAuthRequired(ctx, "GET", "/api/v1/api-keys/current");
    await expectPublishableRefused(ctx, "GET", "/api/v1/api-keys/current");
  });
});

describe("PUT /api/v1/api-keys/{id}", () => {
  test("renames an active key of the account", async () => {
    const ctx = await sharedTestContext();
    const tenant = await registerTenant(ctx);
    const key = await createKey(ctx, tenant.token);
    const res = await ctx.request("PUT", `/api/v1/api-keys/${key.id}`, {
      token: tenant.token,
      body: { name: "Renamed" },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: key.id, name: "Renamed" });
    expectNoSecrets(res.text, [key.apiKey]);
  });

  test("a revoked or unknown key answers 404; a bad id or body 422", async () => {
    const ctx = await sharedTestContext();
    const tenant = await registerTenant(ctx);
    const key = await createKey(ctx, tenant.token);
    await ctx.request("DELETE", `/api/v1/api-keys/${key.id}`, { token: tenant.token });
    const revoked = await ctx.request("PUT", `/api/v1/api-keys/${key.id}`, {
      token: tenant.token,
      body: { name: "x" },
    });
    expect(revoked.status).toBe(404);
    const unknown = await ctx.request("PUT", "/api/v1/api-keys/2147483000", {
      token: tenant.token,
      body: { name: "x" },
    });
    expect(unknown.status).toBe(404);
    const badId = await ctx.request("PUT", "/api/v1/api-keys/abc", {
      token: tenant.token,
      body: { name: "x" },
    });
    expect(badId.status).toBe(422);
    const badBody = await ctx.request("PUT", `/api/v1/api-keys/${key.id}`, {
      token: tenant.token,
      body: { kind: "x" },
    });
    expect(badBody.status).toBe(422);
  });

  test("another account's key answers 404 and keeps its name", async () => {
    const ctx = await sharedTestContext();
    const a = await registerTenant(ctx);
    const key = await createKey(ctx, a.token, { name: "Mine" });
    await expectOtherTenantNotFound(ctx, "PUT", `/api/v1/api-keys/${key.id}`, { body: { name: "Stolen" } });
    const list = await ctx.request("GET", "/api/v1/api-keys/", { token: a.token });
    expect(list.body.find((k: { id: number }) => k.id === key.id).name).toBe("Mine");
  });
});

describe("DELETE /api/v1/api-keys/{id} and /", () => {
  test("a revoked key fails on the very next request while the account's other keys work", async () => {
    const ctx = await sharedTestContext();
    const tenant = await registerTenant(ctx);
    const doomed = await createKey(ctx, tenant.token);
    const warm = await ctx.request("GET", "/api/v1/api-keys/current", { apiKey: doomed.apiKey });
    expect(warm.status).toBe(200);
    const res = await ctx.request("DELETE", `/api/v1/api-keys/${doomed.id}`, { apiKey: tenant.apiKey });
    expect(res.status).toBe(204);
    const next = await ctx.request("GET", "/api/v1/api-keys/current", { apiKey: doomed.apiKey });
    expect(next.status).toBe(401);
    expect(next.body.errorCode).toBe("INVALID_API_KEY");
    const other = await ctx.request("GET", "/api/v1/api-keys/current", { apiKey: tenant.apiKey });
    expect(other.status).toBe(200);
    const again = await ctx.request("DELETE", `/api/v1/api-keys/${doomed.id}`, { apiKey: tenant.apiKey });
    expect(again.status).toBe(404);
  });

  test("account B cannot revoke account A's key (404) and A's key keeps working", async () => {
    const ctx = await sharedTestContext();
    const a = await registerTenant(ctx);
    const key = await createKey(ctx, a.token);
    await expectOtherTenantNotFound(ctx, "DELETE", `/api/v1/api-keys/${key.id}`);
    const still = await ctx.request("GET", "/api/v1/api-keys/current", { apiKey: key.apiKey });
    expect(still.status).toBe(200);
  });

  test("DELETE / revokes every key of the account, and only of that account", async () => {
    const ctx = await sharedTestContext();
    const a = await registerTenant(ctx);
    const b = await registerTenant(ctx);
    const second = await createKey(ctx, a.token);
    const res = await ctx.request("DELETE", "/api/v1/api-keys/", { token: a.token });
    expect(res.status).toBe(204);
    for (const apiKey of [a.apiKey, second.apiKey]) {
      expect((await ctx.request("GET", "/api/v1/api-keys/current", { apiKey })).status).toBe(401);
    }
    const list = await ctx.request("GET", "/api/v1/api-keys/", { token: a.token });
    expect(list.body).toEqual([]);
    expect((await ctx.request("GET", "/api/v1/api-keys/current", { apiKey: b.apiKey })).status).toBe(200);
  });

  test("need credentials and refuse publishable keys", async () => {
    const ctx = await sharedTestContext();
    await expectAuthRequired(ctx, "DELETE", "/api/v1/api-keys/1");
    await expectAuthRequired(ctx, "DELETE", "/api/v1/api-keys/");
    await expectAuthRequired(ctx, "PUT", "/api/v1/api-keys/1", { body: { name: "x" } });
    await expectPublishableRefused(ctx, "DELETE", "/api/v1/api-keys/");
    await expectPublishableRefused(ctx, "PUT", "/api/v1/api-keys/1", { body: { name: "x" } });
  });
});
