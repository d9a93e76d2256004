/**
 * The OpenAPI document against the service: each route's documented error cases are called, and every
 * answer's status must be documented for that operation with its errorCode in that status's enum. Every code
 * of the route-specific table (ROUTE_ERRORS) must be produced by at least one case here, so a documented
 * code the route can no longer answer, or a case the document forgot, fails.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { OPENAPI_PATH } from "../../src/app";
import { ROUTE_ERRORS } from "../../src/http/openapi-errors";
import { createTestContext, type TestContext, type TestResponse } from "../helpers/context";
import { createKey, registerTenant, type Tenant } from "../helpers/tenant";

type Json = Record<string, any>;

/**
 * Codes of the table produced by tests of their own, which need a set-up this file does not make: a paid
 * plan, a provider-confirmed subscription, or a webhook whose reference contradicts its session.
 */
const PRODUCED_ELSEWHERE: Record<string, string> = {
  "POST /api/v1/sandbox/reset FREE_PLAN_ONLY": "test/sandbox/sandbox.test.ts (a non-FREE account)",
  "POST /api/v1/billing/create-checkout-session CONFLICT": "needs an active paid subscription",
  "POST /api/v1/billing/create-subscription-session CONFLICT": "needs an active paid subscription",
  "POST /api/v1/billing/webhook/:provider CONFLICT": "needs a session whose reference the event contradicts",
  "POST /api/v1/auth/register RATE_LIMITED": "test/identity/abuse.test.ts (SIGNUP_LIMIT_PER_HOUR)",
  "POST /api/v1/billing/create-checkout-session BILLING_NOT_CONFIGURED":
    "test/billing/hardening.test.ts (no PAYMENT_PROVIDER)",
  "POST /api/v1/billing/create-subscription-session BILLING_NOT_CONFIGURED":
    "test/billing/hardening.test.ts (no PAYMENT_PROVIDER)",
  "POST /api/v1/billing/create-portal-session BILLING_NOT_CONFIGURED":
    "test/billing/hardening.test.ts (no PAYMENT_PROVIDER)",
};

let ctx: TestContext;
let doc: Json;
let tenant: Tenant;
/** route key → codes the cases below got back. */
const produced = new Map<string, Set<string>>();

beforeAll(async () => {
  // Billing in its explicit test mode, so the webhook route has a provider to refuse signatures for.
  ctx = await createTestContext({ PAYMENT_PROVIDER: "local" });
  doc = (await ctx.request("GET", OPENAPI_PATH)).body as Json;
  tenant = await registerTenant(ctx);
}, 120_000);

afterAll(() => ctx?.close());

/** Checks one answer against the document and records its code for the coverage check. */
function conforms(routeKey: string, res: TestResponse, expected: { status: number; code: string }): void {
  const [method, path] = routeKey.split(" ") as [string, string];
  const operation = doc.paths[path.replace(/:([^/]+)/g, "{$1}")]?.[method.toLowerCase()];
  expect({ routeKey, documented: operation !== undefined }).toEqual({ routeKey, documented: true });
  const body = res.body as Json;
  expect({ routeKey, status: res.status, code: body?.errorCode }).toEqual({
    routeKey,
    status: expected.status,
    code: expected.code,
  });
  const codes = operation.responses[String(res.status)]?.content?.["application/json"]?.schema?.properties
    ?.errorCode?.enum as string[] | undefined;
  expect({ routeKey, status: res.status, documents: codes?.includes(body.errorCode) ?? false }).toEqual({
    routeKey,
    status: res.status,
    documents: true,
  });
  const seen = produced.get(routeKey) ?? new Set<string>();
  seen.add(body.errorCode);
  produced.set(routeKey, seen);
}

const call = (method: string, path: string, options: Parameters<TestContext["request"]>[2] = {}) =>
  ctx.request(method, path, options);

describe("each route's documented error cases answer as documented", () => {
  test("catalogue: products, end users, interactions, ingestion", async () => {
    const apiKey = tenant.apiKey;
    const product = { externalId: "p-1", name: "P", price: 5, category: "books" };
    await call("POST", "/api/v1/products/", { apiKey, body: product });
    conforms("POST /api/v1/products/", await call("POST", "/api/v1/products/", { apiKey, body: product }), {
      status: 409,
      code: "CONFLICT",
    });
    conforms("POST /api/v1/products/", await call("POST", "/api/v1/products/", { body: product }), {
      status: 401,
      code: "INVALID_API_KEY",
    });
    conforms("POST /api/v1/products/", await call("POST", "/api/v1/products/", { apiKey, body: { x: 1 } }), {
      status: 422,
      code: "VALIDATION_ERROR",
    });
    const { apiKey: publishable } = await createKey(ctx, tenant.token, { kind: "publishable" });
    conforms("GET /api/v1/products/", await call("GET", "/api/v1/products/", { apiKey: publishable }), {
      status: 403,
      code: "INSUFFICIENT_SCOPE",
    });
    for (const method of ["GET", "PUT", "PATCH", "DELETE"]) {
      const body =
        method === "PUT" ? { name: "P", price: 5, category: "books" } : method === "PATCH" ? {} : undefined;
      conforms(
        `${method} /api/v1/products/external/:external_id`,
        await call(method, "/api/v1/products/external/ghost", { apiKey, body }),
        { status: 404, code: "NOT_FOUND" },
      );
    }
    await call("POST", "/api/v1/end-users/", { apiKey, body: { externalId: "u-1" } });
    conforms(
      "POST /api/v1/end-users/",
      await call("POST", "/api/v1/end-users/", { apiKey, body: { externalId: "u-1" } }),
      { status: 409, code: "CONFLICT" },
    );
    for (const [method, suffix, body] of [
      ["GET", "", undefined],
      ["PATCH", "", {}],
      ["DELETE", "", undefined],
      ["GET", "/export", undefined],
    ] as const) {
      conforms(
        `${method} /api/v1/end-users/external/:external_user_id${suffix}`,
        await call(method, `/api/v1/end-users/external/ghost${suffix}`, { apiKey, body }),
        { status: 404, code: "NOT_FOUND" },
      );
    }
    conforms(
      "POST /api/v1/interactions/",
      await call("POST", "/api/v1/interactions/", {
        apiKey,
        body: { external_user_id: "u-1", external_product_id: "ghost", interaction_type: "VIEW" },
      }),
      { status: 404, code: "NOT_FOUND" },
    );
    conforms(
      "GET /api/v1/ingestion/batch/:job_id",
      await call("GET", "/api/v1/ingestion/batch/999999", { apiKey }),
      { status: 404, code: "NOT_FOUND" },
    );
    const oversize = await ctx.app.handle(
      new Request("http://localhost/api/v1/ingestion/batch", {
        method: "POST",
        headers: { "x-api-key": apiKey, "content-type": "application/json", "content-length": "10485761" },
        body: "{}",
      }),
    );
    conforms(
      "POST /api/v1/ingestion/batch",
      { status: oversize.status, body: await oversize.json(), headers: oversize.headers, text: "" },
      { status: 413, code: "PAYLOAD_TOO_LARGE" },
    );
  }, 60_000);

  test("training pipeline", async () => {
    const own = await registerTenant(ctx);
    const apiKey = own.apiKey;
    conforms("GET /api/v1/pipeline/status", await call("GET", "/api/v1/pipeline/status", { apiKey }), {
      status: 404,
      code: "NO_MODEL",
    });
    conforms(
      "GET /api/v1/pipeline/jobs/:job_id/status",
      await call("GET", "/api/v1/pipeline/jobs/999999/status", { apiKey }),
      { status: 404, code: "NOT_FOUND" },
    );
    let refused: TestResponse | undefined;
    for (let i = 0; i < 10 && refused === undefined; i++) {
      const res = await call("POST", "/api/v1/pipeline/train", { apiKey });
      if (res.status !== 202) refused = res;
    }
    conforms("POST /api/v1/pipeline/train", refused!, { status: 429, code: "TRAINING_TOO_FREQUENT" });
  }, 60_000);

  test("identity: register, login, verification, users, accounts, keys", async () => {
    const register = { accountName: "Shop", email: tenant.email, password: "another password 1" };
    conforms("POST /api/v1/auth/register", await call("POST", "/api/v1/auth/register", { body: register }), {
      status: 409,
      code: "CONFLICT",
    });
    const login = (email: string, password: string) =>
      call("POST", "/api/v1/auth/token", { body: { email, password } });
    const victim = await registerTenant(ctx);
    conforms("POST /api/v1/auth/token", await login(victim.email, "wrong password!"), {
      status: 401,
      code: "INVALID_CREDENTIALS",
    });
    let throttled: TestResponse | undefined;
    for (let i = 0; i < 30 && throttled === undefined; i++) {
      const res = await login(victim.email, "wrong password!");
      if (res.status === 429) throttled = res;
    }
    conforms("POST /api/v1/auth/token", throttled!, { status: 429, code: "RATE_LIMITED" });
    const inactive = await registerTenant(ctx);
    await ctx.deps.database.db.execute(
      sql`update accounts set is_active = false where id = ${inactive.accountId}`,
    );
    conforms("POST /api/v1/auth/token", await login(inactive.email, inactive.password), {
      status: 403,
      code: "FORBIDDEN",
    });

    conforms(
      "GET /api/v1/auth/verify-email",
      await call("GET", "/api/v1/auth/verify-email", { query: { token: "no-such-token" } }),
      { status: 404, code: "NOT_FOUND" },
    );

    conforms(
      "PUT /api/v1/system-users/me",
      await call("PUT", "/api/v1/system-users/me", {
        token: tenant.token,
        body: { currentPassword: "not the password", password: "brand new password" },
      }),
      { status: 401, code: "INVALID_CREDENTIALS" },
    );
    conforms(
      "PUT /api/v1/system-users/me",
      await call("PUT", "/api/v1/system-users/me", {
        token: tenant.token,
        body: { email: victim.email, currentPassword: tenant.password },
      }),
      { status: 409, code: "CONFLICT" },
    );
    conforms(
      "PATCH /api/v1/accounts/current",
      await call("PATCH", "/api/v1/accounts/current", { token: tenant.token, body: { is_active: false } }),
      { status: 403, code: "ADMIN_REQUIRED" },
    );
    conforms(
      "PUT /api/v1/accounts/current",
      await call("PUT", "/api/v1/accounts/current", { token: tenant.token, body: { name: "Renamed" } }),
      { status: 403, code: "ADMIN_REQUIRED" },
    );

    conforms(
      "GET /api/v1/api-keys/current",
      await call("GET", "/api/v1/api-keys/current", { token: tenant.token }),
      {
        status: 404,
        code: "NOT_FOUND",
      },
    );
    conforms(
      "PUT /api/v1/api-keys/:api_key_id",
      await call("PUT", "/api/v1/api-keys/999999", { token: tenant.token, body: { name: "x" } }),
      { status: 404, code: "NOT_FOUND" },
    );
    conforms(
      "DELETE /api/v1/api-keys/:api_key_id",
      await call("DELETE", "/api/v1/api-keys/999999", { token: tenant.token }),
      { status: 404, code: "NOT_FOUND" },
    );
    conforms("GET /api/v1/api-keys/", await call("GET", "/api/v1/api-keys/", { token: "not.a.jwt" }), {
      status: 401,
      code: "INVALID_TOKEN",
    });
  }, 60_000);

  test("billing, sandbox, recommendations, metrics", async () => {
    const apiKey = tenant.apiKey;
    conforms(
      "POST /api/v1/billing/webhook/:provider",
      await call("POST", "/api/v1/billing/webhook/nobody", {
        body: { id: "e-1", type: "x", data: { id: "1" } },
      }),
      { status: 404, code: "NOT_FOUND" },
    );
    const provider = ctx.deps.payments?.name ?? "local";
    conforms(
      "POST /api/v1/billing/webhook/:provider",
      await call("POST", `/api/v1/billing/webhook/${provider}`, {
        body: { id: "e-2", type: "subscription_preapproval", data: { id: "1" } },
        headers: { "x-signature": "ts=1,v1=00" },
      }),
      { status: 401, code: "INVALID_SIGNATURE" },
    );
    for (const [method, path] of [
      ["GET", "/api/v1/billing/local/checkout/:token"],
      ["POST", "/api/v1/billing/local/checkout/:token/confirm"],
      ["GET", "/api/v1/billing/local/portal/:token"],
      ["POST", "/api/v1/billing/local/portal/:token/cancel"],
    ] as const) {
      conforms(`${method} ${path}`, await call(method, path.replace(":token", "no-such-session")), {
        status: 404,
        code: "NOT_FOUND",
      });
    }

    const demo = await registerTenant(ctx);
    await call("POST", "/api/v1/sandbox/quick-start", { apiKey: demo.apiKey });
    conforms(
      "POST /api/v1/sandbox/quick-start",
      await call("POST", "/api/v1/sandbox/quick-start", { apiKey: demo.apiKey }),
      { status: 409, code: "CONFLICT" },
    );

    conforms(
      "GET /api/v1/recommendations/products/external/:external_product_id/similar",
      await call("GET", "/api/v1/recommendations/products/external/ghost/similar", { apiKey }),
      { status: 404, code: "NOT_FOUND" },
    );
    conforms(
      "POST /api/v1/recommendations/ecommerce/product-page",
      await call("POST", "/api/v1/recommendations/ecommerce/product-page", {
        apiKey,
        query: { current_product_id: "ghost" },
        body: { external_user_id: "u-1" },
      }),
      { status: 404, code: "NOT_FOUND" },
    );
    const { apiKey: publishable } = await createKey(ctx, tenant.token, { kind: "publishable" });
    conforms(
      "POST /api/v1/recommendations/personalized/query",
      await call("POST", "/api/v1/recommendations/personalized/query", {
        apiKey: publishable,
        headers: { origin: "https://elsewhere.example.org" },
        body: { external_user_id: "u-1" },
      }),
      { status: 403, code: "ORIGIN_NOT_ALLOWED" },
    );
    conforms(
      "GET /api/v1/recommendations/category/:category",
      await call("GET", "/api/v1/recommendations/category/books", { apiKey, query: { limit: 0 } }),
      { status: 422, code: "VALIDATION_ERROR" },
    );

    conforms(
      "GET /metrics",
      await call("GET", "/metrics", { headers: { "x-forwarded-for": "203.0.113.9" } }),
      {
        status: 403,
        code: "FORBIDDEN",
      },
    );
  }, 120_000);

  test("experiments: a second running one on an endpoint, and unknown ids", async () => {
    const apiKey = tenant.apiKey;
    const body = {
      name: "x",
      endpoint: "category",
      variants: [
        { name: "A", traffic: 0.5 },
        { name: "B", traffic: 0.5 },
      ],
    };
    await call("POST", "/api/v1/experiments/", { apiKey, body });
    conforms("POST /api/v1/experiments/", await call("POST", "/api/v1/experiments/", { apiKey, body }), {
      status: 409,
      code: "CONFLICT",
    });
    for (const [method, suffix] of [
      ["GET", ""],
      ["POST", "/stop"],
      ["GET", "/results"],
    ] as const) {
      conforms(
        `${method} /api/v1/experiments/:experiment_id${suffix}`,
        await call(method, `/api/v1/experiments/2147483647${suffix}`, { apiKey }),
        { status: 404, code: "NOT_FOUND" },
      );
    }
  });

  test("every route-specific documented code was produced above (or by the test named for it)", async () => {
    const missing: string[] = [];
    for (const [routeKey, codes] of Object.entries(ROUTE_ERRORS)) {
      for (const code of codes) {
        if (produced.get(routeKey)?.has(code)) continue;
        if (PRODUCED_ELSEWHERE[`${routeKey} ${code}`] !== undefined) continue;
        missing.push(`${routeKey} ${code}`);
      }
    }
    // GET /metrics answers INVALID_TOKEN only with METRICS_TOKEN set: test/deploy/metrics.test.ts.
    expect(missing).toEqual(["GET /metrics INVALID_TOKEN"]);
  });
});
