import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createTestContext, type TestContext } from "../helpers/context";
import { trackTempDir } from "../helpers/temp-dirs";
import { registerTenant } from "../helpers/tenant";

const REDIS_URL = process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379";
let ctx: TestContext;

beforeAll(async () => {
  const plans = join(tmpdir(), `plans-${crypto.randomUUID()}.json`);
  trackTempDir(plans);
  writeFileSync(
    plans,
    JSON.stringify({
      FREE: {
        name: "FREE",
        priceMonthly: 0,
        currency: "USD",
        limits: {
          requestsPerMinute: 7,
          monthlyRequests: 1000,
          maxProducts: 10,
          maxEndUsers: 10,
          trainingsPerDay: 1,
        },
        features: [],
      },
    }),
  );
  ctx = await createTestContext({
    REDIS_URL,
    // A fresh prefix per run: account ids of a new test database must not meet an earlier run's counters.
    REDIS_KEY_PREFIX: `test:${crypto.randomUUID()}:`,
    PLANS_FILE: plans,
  });
  const fixed = Math.floor(Date.now() / 60_000) * 60_000 + 5 * 60_000 + 1_000;
  ctx.deps.planEnforcer.clock = () => fixed;
});
afterAll(() => ctx.close());

describe("plan guard on Redis (REDIS_URL set)", () => {
  test("uses the Redis limiter and meter", () => {
    expect(ctx.deps.rateLimiter.kind).toBe("redis");
    expect(ctx.deps.usageMeter.kind).toBe("redis");
  });

  test("N concurrent requests against a per-minute limit of M admit exactly M", async () => {
    const tenant = await registerTenant(ctx);
    const results = await Promise.all(
      Array.from({ length: 20 }, () =>
        ctx.request("GET", "/api/v1/accounts/usage", { apiKey: tenant.apiKey }),
      ),
    );
    expect(results.filter((r) => r.status === 200).length).toBe(7);
    const refused = results.find((r) => r.status === 429)!;
    expect(refused.body.errorCode).toBe("RATE_LIMITED");
    expect(refused.headers.get("retry-after")).toBeTruthy();
  });

  test("requests counted in Redis reach the usage report", async () => {
    const tenant = await registerTenant(ctx);
    await ctx.request("GET", "/api/v1/sandbox/status", { apiKey: tenant.apiKey });
    await ctx.request("GET", "/api/v1/products/", { apiKey: tenant.apiKey });
    const res = await ctx.request("GET", "/api/v1/accounts/usage", { apiKey: tenant.apiKey });
    expect(res.status).toBe(200);
    expect(res.body.requests).toBe(2);
  });
});
