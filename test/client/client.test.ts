/**
 * The typed client (clients/js) against the real service, a child process on a free port: in Bun here,
 * and in Node 20+ from its built ESM file.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { buildClient } from "../../clients/js/build";
import { RecsApiError, RecsClient, RecsNetworkError } from "../../clients/js/src/index";
import { type Service, startService } from "../helpers/live-service";
import { makeTempDir } from "../helpers/temp-dirs";

let service: Service;
let secret: RecsClient;
let email: string;
const password = "client-pass-123";

beforeAll(async () => {
  service = await startService();
  const anonymous = new RecsClient({ baseUrl: service.baseUrl });
  email = `client-${crypto.randomUUID()}@example.com`;
  const registered = await anonymous.request("post", "/api/v1/auth/register", {
    body: { accountName: "Client shop", email, password },
  });
  secret = new RecsClient({ baseUrl: service.baseUrl, apiKey: registered.apiKey });
  for (let i = 1; i <= 5; i++) {
    await secret.request("post", "/api/v1/products/", {
      body: { externalId: `sku-${i}`, name: `Product ${i}`, price: i * 10, category: "kitchen" },
    });
  }
}, 120_000);

afterAll(async () => {
  await service?.server.stop();
});

describe("typed client in Bun", () => {
  test("calls routes with a secret key, path parameters filled in, typed answers", async () => {
    const product = await secret.request("get", "/api/v1/products/external/{external_id}", {
      path: { external_id: "sku-3" },
    });
    expect(product.name).toBe("Product 3");
    expect(product.price).toBe(30);
    const recorded = await secret.interactions.record({
      external_user_id: "u1",
      external_product_id: "sku-1",
      interaction_type: "VIEW",
    });
    expect(recorded).toMatchObject({ external_user_id: "u1", external_product_id: "sku-1" });
    const page = await secret.recommendations.homepage("u1", 3);
    expect(page.items.length).toBeGreaterThan(0);
    expect(page.items.map((item) => item.externalId)).not.toContain("sku-1");
  });

  test("logs in and calls JWT routes with the token; a 204 answers undefined", async () => {
    const login = await secret.auth.login(email, password);
    const dashboard = secret.withAuth({ token: login.accessToken });
    const keys = await dashboard.request("get", "/api/v1/api-keys/");
    expect(Array.isArray(keys)).toBe(true);
    const created = await dashboard.request("post", "/api/v1/api-keys/", { body: { name: "to revoke" } });
    const revoked = await dashboard.request("delete", "/api/v1/api-keys/{api_key_id}", {
      path: { api_key_id: created.id },
    });
    expect(revoked).toBeUndefined();
  });

  test("walks a paged list with an async iterator, page by page", async () => {
    const seen: string[] = [];
    for await (const product of secret.paginate("/api/v1/products/", { pageSize: 2 }))
      seen.push(product.externalId);
    expect(seen.sort()).toEqual(["sku-1", "sku-2", "sku-3", "sku-4", "sku-5"]);
  });

  test("error answers become RecsApiError with status, errorCode, message, requestId (and detail for 422)", async () => {
    const missing = await secret
      .request("get", "/api/v1/products/external/{external_id}", { path: { external_id: "nope" } })
      .catch((error) => error);
    expect(missing).toBeInstanceOf(RecsApiError);
    expect(missing).toMatchObject({ status: 404, errorCode: "NOT_FOUND" });
    expect(missing.requestId).toMatch(/.+/);
    expect(missing.message.length).toBeGreaterThan(0);

    const invalid = await secret
      .request("post", "/api/v1/products/", {
        body: { externalId: "x", name: "x", price: -1, category: "c" },
      })
      .catch((error) => error);
    expect(invalid).toMatchObject({ status: 422, errorCode: "VALIDATION_ERROR" });
    expect(invalid.detail[0].loc).toEqual(["body", "price"]);

    const badKey = new RecsClient({ baseUrl: service.baseUrl, apiKey: `sk_live_${"0".repeat(40)}` });
    await expect(badKey.request("get", "/api/v1/products/")).rejects.toMatchObject({
      status: 401,
      errorCode: "INVALID_API_KEY",
    });
  });

  test("an unreachable service is a RecsNetworkError naming the address", async () => {
    const nowhere = new RecsClient({ baseUrl: "http://127.0.0.1:9", apiKey: "sk_live_x" });
    const error = await nowhere.request("get", "/api/v1/products/").catch((e) => e);
    expect(error).toBeInstanceOf(RecsNetworkError);
    expect(error.message).toContain("http://127.0.0.1:9/api/v1/products/");
  });

  test("an error page that is not the service's JSON gets a code from its status, never a made-up NOT_FOUND", async () => {
    const pages = new Map([
      ["/bad", 400],
      ["/big", 413],
      ["/gone", 404],
      ["/down", 502],
    ]);
    const proxy = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      fetch: (request) =>
        new Response("<html>proxy error</html>", {
          status: pages.get(new URL(request.url).pathname.replace("/api/v1/products/external", "")) ?? 500,
          headers: { "content-type": "text/html" },
        }),
    });
    try {
      const client = new RecsClient({
        baseUrl: `http://127.0.0.1:${proxy.port}`,
        apiKey: secretKey(),
        retry: { retries: 0 },
      });
      const codes: Record<string, unknown> = {};
      for (const page of pages.keys()) {
        const error = await client
          .request("get", "/api/v1/products/external/{external_id}", { path: { external_id: page.slice(1) } })
          .catch((e) => e);
        expect(error).toBeInstanceOf(RecsApiError);
        codes[page] = [error.status, error.errorCode];
      }
      expect(codes).toEqual({
        "/bad": [400, "UNEXPECTED_RESPONSE"],
        "/big": [413, "PAYLOAD_TOO_LARGE"],
        "/gone": [404, "NOT_FOUND"],
        "/down": [502, "INTERNAL_ERROR"],
      });
    } finally {
      proxy.stop(true);
    }
  });

  test("retries a 503 after the Retry-After it names, and succeeds", async () => {
    // One overloaded answer in front of the real service, as a load balancer would give it.
    const seen: number[] = [];
    const proxy = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      async fetch(request) {
        seen.push(Date.now());
        if (seen.length === 1) {
          return Response.json(
            { message: "busy", errorCode: "SERVICE_UNAVAILABLE", requestId: "r1" },
            { status: 503, headers: { "retry-after": "1" } },
          );
        }
        const url = new URL(request.url);
        return fetch(service.baseUrl + url.pathname + url.search, { headers: request.headers });
      },
    });
    try {
      const client = new RecsClient({ baseUrl: `http://127.0.0.1:${proxy.port}`, apiKey: secretKey() });
      const product = await client.request("get", "/api/v1/products/external/{external_id}", {
        path: { external_id: "sku-2" },
      });
      expect(product.name).toBe("Product 2");
      expect(seen.length).toBe(2);
      expect(seen[1]! - seen[0]!).toBeGreaterThanOrEqual(950);
    } finally {
      proxy.stop(true);
    }
  });

  test("a 429 whose Retry-After exceeds the bound is not waited for: RATE_LIMITED with retryAfter", async () => {
    const dir = makeTempDir("rs-client-plans-");
    const plans = join(dir, "plans.json");
    const limits = {
      requestsPerMinute: 3,
      monthlyRequests: 1000,
      maxProducts: 10,
      maxEndUsers: 10,
      trainingsPerDay: 1,
    };
    writeFileSync(
      plans,
      JSON.stringify({ FREE: { name: "FREE", priceMonthly: 0, currency: "USD", limits, features: [] } }),
    );
    const limited = await startService({ PLANS_FILE: plans });
    try {
      const registered = await new RecsClient({ baseUrl: limited.baseUrl }).request(
        "post",
        "/api/v1/auth/register",
        {
          body: { accountName: "Limited", email: `limited-${crypto.randomUUID()}@example.com`, password },
        },
      );
      const calls: number[] = [];
      const counting: typeof fetch = Object.assign(
        (input: RequestInfo | URL, init?: RequestInit) => {
          calls.push(Date.now());
          return fetch(input, init);
        },
        { preconnect: fetch.preconnect },
      );
      const client = new RecsClient({
        baseUrl: limited.baseUrl,
        apiKey: registered.apiKey,
        retry: { retries: 3, maxDelayMs: 200 },
        fetch: counting,
      });
      let error: unknown;
      let requests = 0;
      // Until the plan's per-minute limit refuses one (a new minute's window may let a few more through).
      for (; requests < 10 && error === undefined; requests++) {
        error = await client.request("get", "/api/v1/products/").then(
          () => undefined,
          (e) => e,
        );
      }
      expect(error).toBeInstanceOf(RecsApiError);
      expect(error).toMatchObject({ status: 429, errorCode: "RATE_LIMITED" });
      expect((error as RecsApiError).retryAfter).toBeGreaterThan(0);
      // Every request went out once, the refused one too: a Retry-After of seconds is beyond the 200 ms bound.
      expect(calls.length).toBe(requests);
    } finally {
      await limited.server.stop();
    }
  }, 60_000);
});

describe("typed client in Node 20+", () => {
  test("the built ESM file works in node against the real service", async () => {
    const dir = makeTempDir("rs-client-node-");
    const built = await buildClient(join(dir, "dist"));
    const script = join(dir, "smoke.mjs");
    writeFileSync(
      script,
      `import { RecsClient, RecsApiError } from ${JSON.stringify(built)};
const [baseUrl, apiKey] = process.argv.slice(2);
const client = new RecsClient({ baseUrl, apiKey });
const ids = [];
for await (const product of client.paginate("/api/v1/products/", { pageSize: 2 })) ids.push(product.externalId);
const similar = await client.recommendations.similar("sku-1", { limit: 2 });
let error;
try { await client.request("get", "/api/v1/products/external/{external_id}", { path: { external_id: "nope" } }); }
catch (e) { error = { isApiError: e instanceof RecsApiError, status: e.status, errorCode: e.errorCode }; }
console.log(JSON.stringify({ node: process.version, ids: ids.sort(), similar: similar.items.length, error }));
`,
    );
    const run = Bun.spawnSync(["node", script, service.baseUrl, secretKey()], {
      stdout: "pipe",
      stderr: "pipe",
    });
    expect(run.stderr.toString()).toBe("");
    const result = JSON.parse(run.stdout.toString());
    expect(Number(/^v(\d+)/.exec(result.node)?.[1])).toBeGreaterThanOrEqual(20);
    expect(result.ids).toEqual(["sku-1", "sku-2", "sku-3", "sku-4", "sku-5"]);
    expect(result.similar).toBeGreaterThanOrEqual(0);
    expect(result.error).toEqual({ isApiError: true, status: 404, errorCode: "NOT_FOUND" });
  }, 60_000);
});

function secretKey(): string {
  return (secret as unknown as { options: { apiKey: string } }).options.apiKey;
}

/** Compile-time checks (tsc runs them in CI): wrong paths, methods, bodies and parameters do not type. */
export function typeChecks(client: RecsClient) {
  // @ts-expect-error no such path
  void client.request("get", "/api/v1/nope");
  // @ts-expect-error products/ has no PATCH
  void client.request("patch", "/api/v1/products/");
  // @ts-expect-error the path parameter is required
  void client.request("get", "/api/v1/products/external/{external_id}");
  // @ts-expect-error the body is required and typed
  void client.request("post", "/api/v1/products/", { body: { name: 1 } });
  void client.request("post", "/api/v1/recommendations/ecommerce/homepage", {
    body: { external_user_id: "u" },
  });
  const code: RecsApiError["errorCode"] = "RATE_LIMITED";
  // @ts-expect-error errorCode is the closed union
  const wrong: RecsApiError["errorCode"] = "SOMETHING_ELSE";
  return [code, wrong];
}
