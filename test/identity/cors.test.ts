import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql } from "drizzle-orm";
import { ConfigError, loadConfig } from "../../src/config";
import { PREFLIGHT_MAX_AGE_SECONDS, publishableMethods } from "../../src/http/cors";
import { createTestContext, type TestContext } from "../helpers/context";
import { trackTempDir } from "../helpers/temp-dirs";
import { ALLOWED_ORIGIN, createKey, registerTenant, type Tenant } from "../helpers/tenant";

const TRUSTED_ORIGIN = "https://admin.example.org";
const FOREIGN_ORIGIN = "https://evil.example.net";
const QUERY = "/api/v1/recommendations/personalized/query";
const RATE_LIMIT = 6;

let ctx: TestContext;
let tenant: Tenant;
let publishable: string;

beforeAll(async () => {
  const plans = join(tmpdir(), `plans-${crypto.randomUUID()}.json`);
  trackTempDir(plans);
  const limits = { monthlyRequests: 100_000, maxProducts: 100, maxEndUsers: 100, trainingsPerDay: 5 };
  writeFileSync(
    plans,
    JSON.stringify({
      FREE: {
        name: "FREE",
        priceMonthly: 0,
        currency: "USD",
        limits: { requestsPerMinute: 10_000, ...limits },
        features: [],
      },
      STARTER: {
        name: "STARTER",
        priceMonthly: 1,
        currency: "USD",
        limits: { requestsPerMinute: RATE_LIMIT, ...limits },
        features: [],
      },
    }),
  );
  ctx = await createTestContext({
    CORS_ORIGINS: `${TRUSTED_ORIGIN}, http://localhost:5173`,
    PLANS_FILE: plans,
  });
  tenant = await registerTenant(ctx);
  publishable = (await createKey(ctx, tenant.token, { kind: "publishable" })).apiKey;
  // One fixed minute, so a rate-limit window cannot roll over in the middle of a test.
  const fixed = Math.floor(Date.now() / 60_000) * 60_000 + 5 * 60_000 + 1_000;
  ctx.deps.planEnforcer.clock = () => fixed;
});
afterAll(() => ctx.close());

const preflight = (path: string, origin: string, method = "POST") =>
  ctx.request("OPTIONS", path, {
    headers: {
      origin,
      "access-control-request-method": method,
      "access-control-request-headers": "content-type, x-api-key",
    },
  });

const expectNoGrant = (headers: Headers) => {
  expect(headers.get("access-control-allow-origin")).toBeNull();
  expect(headers.get("access-control-allow-methods")).toBeNull();
  expect(headers.get("access-control-allow-credentials")).toBeNull();
};

describe("CORS on the routes a publishable key may call", () => {
  test("a preflight from any origin is answered 204 with the methods, headers and max-age, before authentication", async () => {
    for (const origin of [ALLOWED_ORIGIN, FOREIGN_ORIGIN, "http://localhost:3000"]) {
      const res = await preflight(QUERY, origin);
      expect(res.status).toBe(204);
      expect(res.headers.get("access-control-allow-origin")).toBe(origin);
      expect(res.headers.get("access-control-allow-methods")).toBe("GET, POST");
      expect(res.headers.get("access-control-allow-headers")).toBe("Content-Type, X-API-Key");
      expect(res.headers.get("access-control-max-age")).toBe(String(PREFLIGHT_MAX_AGE_SECONDS));
      expect(res.headers.get("vary")).toContain("Origin");
      expect(res.headers.get("x-request-id")).toBeTruthy();
    }
    const interactions = await preflight("/api/v1/interactions/", FOREIGN_ORIGIN);
    expect(interactions.status).toBe(204);
    expect(interactions.headers.get("access-control-allow-methods")).toBe("POST");
  });

  test("an answer to the key's allowed origin echoes that origin with Vary: Origin and exposes the request id", async () => {
    const res = await ctx.request("POST", QUERY, {
      apiKey: publishable,
      headers: { origin: ALLOWED_ORIGIN },
      body: { external_user_id: "u1", limit: 3 },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("access-control-allow-origin")).toBe(ALLOWED_ORIGIN);
    expect(res.headers.get("vary")).toContain("Origin");
    expect(res.headers.get("access-control-expose-headers")).toContain("X-Request-Id");
    expect(res.headers.get("access-control-expose-headers")).toContain("Retry-After");

    const preset = await ctx.request("POST", "/api/v1/recommendations/ecommerce/homepage", {
      apiKey: publishable,
      headers: { origin: ALLOWED_ORIGIN },
      body: { external_user_id: "u1" },
    });
    expect(preset.status).toBe(200);
    expect(preset.headers.get("access-control-allow-origin")).toBe(ALLOWED_ORIGIN);
  });

  test("a wildcard domain grants its sub-domains, each echoed as sent", async () => {
    const { apiKey } = await createKey(ctx, tenant.token, {
      kind: "publishable",
      allowedDomains: ["*.shops.example.com"],
    });
    const origin = "https://berlin.shops.example.com";
    const res = await ctx.request("POST", QUERY, {
      apiKey,
      headers: { origin },
      body: { external_user_id: "u1", limit: 3 },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("access-control-allow-origin")).toBe(origin);
  });

  test("a refusal to an allowed origin (403 INSUFFICIENT_SCOPE, 429) still carries the grant, so the page can read it", async () => {
    const readOnly = await createKey(ctx, tenant.token, {
      kind: "publishable",
      scopes: ["recommendations:read"],
    });
    const scope = await ctx.request("POST", "/api/v1/interactions/", {
      apiKey: readOnly.apiKey,
      headers: { origin: ALLOWED_ORIGIN },
      body: { external_user_id: "u1", external_product_id: "p1", interaction_type: "CLICK" },
    });
    expect(scope.status).toBe(403);
    expect(scope.body.errorCode).toBe("INSUFFICIENT_SCOPE");
    expect(scope.headers.get("access-control-allow-origin")).toBe(ALLOWED_ORIGIN);
    expect(scope.headers.get("x-request-id")).toBe(scope.body.requestId);

    const limited = await limitedTenant();
    const answers = [];
    for (let i = 0; i <= RATE_LIMIT; i++) {
      answers.push(
        await ctx.request("POST", QUERY, {
          apiKey: limited.publishable,
          headers: { origin: ALLOWED_ORIGIN },
          body: { external_user_id: "u1", limit: 1 },
        }),
      );
    }
    const refused = answers.at(-1)!;
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).toBeTruthy();
    expect(refused.headers.get("access-control-allow-origin")).toBe(ALLOWED_ORIGIN);
    expect(refused.headers.get("access-control-expose-headers")).toContain("Retry-After");
  });

  test("preflights are not counted by the rate limit", async () => {
    const admitted = async (preflights: number): Promise<number> => {
      const limited = await limitedTenant();
      for (let i = 0; i < preflights; i++) expect((await preflight(QUERY, ALLOWED_ORIGIN)).status).toBe(204);
      let ok = 0;
      for (let i = 0; i <= RATE_LIMIT; i++) {
        const res = await ctx.request("POST", QUERY, {
          apiKey: limited.publishable,
          headers: { origin: ALLOWED_ORIGIN },
          body: { external_user_id: "u1", limit: 1 },
        });
        if (res.status === 200) ok++;
      }
      return ok;
    };
    // The sign-up's own calls count too, so the baseline is measured rather than assumed.
    const baseline = await admitted(0);
    expect(baseline).toBeGreaterThan(0);
    expect(await admitted(RATE_LIMIT * 3)).toBe(baseline);
  });
});

describe("CORS on every other route (CORS_ORIGINS)", () => {
  test("an origin listed in CORS_ORIGINS gets a preflight with Authorization and answers it can read", async () => {
    const pre = await preflight("/api/v1/products/", TRUSTED_ORIGIN, "GET");
    expect(pre.status).toBe(204);
    expect(pre.headers.get("access-control-allow-origin")).toBe(TRUSTED_ORIGIN);
    expect(pre.headers.get("access-control-allow-headers")).toContain("Authorization");
    const list = await ctx.request("GET", "/api/v1/products/", {
      apiKey: tenant.apiKey,
      headers: { origin: TRUSTED_ORIGIN },
    });
    expect(list.status).toBe(200);
    expect(list.headers.get("access-control-allow-origin")).toBe(TRUSTED_ORIGIN);
    expect(list.headers.get("vary")).toContain("Origin");
    const unauthenticated = await ctx.request("GET", "/api/v1/products/", {
      headers: { origin: TRUSTED_ORIGIN },
    });
    expect(unauthenticated.status).toBe(401);
    expect(unauthenticated.headers.get("access-control-allow-origin")).toBe(TRUSTED_ORIGIN);
  });

  test("CORS_ORIGINS refuses `*` and values that are not a bare origin, naming the setting", () => {
    for (const value of ["*", "https://admin.example.org/path", "admin.example.org", "ftp://x.example"]) {
      expect(() => loadConfig({ DATA_DIR: ctx.deps.config.dataDir, CORS_ORIGINS: value })).toThrow(
        ConfigError,
      );
    }
    const config = loadConfig({
      DATA_DIR: ctx.deps.config.dataDir,
      CORS_ORIGINS: "https://a.example/, https://b.example:8443",
    });
    expect(config.corsOrigins).toEqual(["https://a.example", "https://b.example:8443"]);
  });
});

describe("CORS never grants a foreign origin", () => {
  test("a preflight from an unlisted origin to a secret-key route is answered without any grant", async () => {
    for (const origin of [ALLOWED_ORIGIN, FOREIGN_ORIGIN]) {
      const res = await preflight("/api/v1/products/", origin, "GET");
      expect(res.status).toBe(204);
      expectNoGrant(res.headers);
    }
  });

  test("a publishable key called from a foreign origin is refused 403 without a grant", async () => {
    // Plain http for the key's own host too: a page an intermediary could rewrite is no allowed origin.
    const plainHttp = ALLOWED_ORIGIN.replace("https:", "http:");
    for (const origin of [
      FOREIGN_ORIGIN,
      "https://shop.example.com.evil.io",
      "http://evilshop.example.com",
      plainHttp,
    ]) {
      const res = await ctx.request("POST", QUERY, {
        apiKey: publishable,
        headers: { origin },
        body: { external_user_id: "u1" },
      });
      expect(res.status).toBe(403);
      expect(res.body.errorCode).toBe("ORIGIN_NOT_ALLOWED");
      expectNoGrant(res.headers);
      expect(res.headers.get("vary")).toContain("Origin");
    }
  });

  test("a secret key answers a browser on a publishable route without a grant, and an unknown key too", async () => {
    const secret = await ctx.request("POST", QUERY, {
      apiKey: tenant.apiKey,
      headers: { origin: ALLOWED_ORIGIN },
      body: { external_user_id: "u1" },
    });
    expect(secret.status).toBe(200);
    expectNoGrant(secret.headers);
    const unknown = await ctx.request("POST", QUERY, {
      apiKey: `pk_live_${"0".repeat(40)}`,
      headers: { origin: ALLOWED_ORIGIN },
      body: { external_user_id: "u1" },
    });
    expect(unknown.status).toBe(401);
    expectNoGrant(unknown.headers);
  });

  test("an opaque (`null`) or malformed Origin gets no grant, even in a preflight", async () => {
    for (const origin of ["null", "not a url", "https://shop.example.com/path"]) {
      const res = await preflight(QUERY, origin);
      expect(res.status).toBe(204);
      expectNoGrant(res.headers);
    }
  });

  test("the publishable route table matches the routes a publishable key can really call", async () => {
    const own = await registerTenant(ctx);
    const { apiKey } = await createKey(ctx, own.token, { kind: "publishable" });
    const routes = (ctx.app.routes as unknown as { method: string; path: string }[]).filter(
      (route) => route.method !== "OPTIONS" && route.path.startsWith("/api/v1/"),
    );
    expect(routes.length).toBeGreaterThan(30);
    for (const route of routes) {
      const path = route.path.replace(/:[^/]+/g, "1").replace(/\*$/, "books");
      const body = route.method === "GET" || route.method === "DELETE" ? undefined : {};
      const res = await ctx.request(route.method, path, {
        apiKey,
        body,
        headers: { origin: ALLOWED_ORIGIN },
      });
      const admitted =
        !(res.status === 403 && res.body?.errorCode === "INSUFFICIENT_SCOPE") && res.status !== 401;
      const anonymous = await ctx.request(route.method, path, { body });
      const needsCredentials = anonymous.status === 401;
      const listed = publishableMethods(path)?.split(", ").includes(route.method) ?? false;
      expect({ route: `${route.method} ${route.path}`, callable: admitted && needsCredentials }).toEqual({
        route: `${route.method} ${route.path}`,
        callable: listed,
      });
    }
  });
});

/** A tenant on the STARTER plan of this file's plan table (RATE_LIMIT requests a minute). */
async function limitedTenant(): Promise<{ publishable: string }> {
  const own = await registerTenant(ctx);
  await ctx.deps.database.db.execute(
    sql`update accounts set plan = 'STARTER', subscription_status = 'active' where id = ${own.accountId}`,
  );
  await ctx.deps.identity.accounts.changed(own.accountId);
  return { publishable: (await createKey(ctx, own.token, { kind: "publishable" })).apiKey };
}
