import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { RedisClient } from "bun";
import { RedisLoginThrottle } from "../../src/modules/auth/redis-login-throttle";
import { createLogger } from "../../src/shared/logger";
import { createTestContext, type TestContext } from "../helpers/context";
import { registerTenant, uniqueEmail } from "../helpers/tenant";

const REDIS_URL = process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379";
// Two services sharing one Redis (as two processes would), under a prefix of this run only.
const env = { REDIS_URL, REDIS_KEY_PREFIX: `test:${crypto.randomUUID()}:`, TRUST_PROXY: "1" };
let a: TestContext;
let b: TestContext;

beforeAll(async () => {
  [a, b] = await Promise.all([createTestContext(env), createTestContext(env)]);
  // On a busy machine one store's start-up can stall the other's Redis handshake past its timeout; these
  // tests are about sharing, so both must be connected first (the outage path has a test of its own).
  for (const client of [a.deps.redis!, b.deps.redis!]) {
    for (let tries = 0; !client.connected && tries < 20; tries++)
      await client.connect().catch(() => Bun.sleep(250));
  }
});
afterAll(async () => {
  await Promise.all([a?.close(), b?.close()]);
});

const login = (ctx: TestContext, email: string, password: string, ip: string) =>
  ctx.request("POST", "/api/v1/auth/token", {
    body: { email, password },
    headers: { "x-forwarded-for": ip },
  });

describe("login throttling on Redis (REDIS_URL set)", () => {
  test("failures through two services add up: after 3 + 2 from one client the right password is refused in both", async () => {
    const tenant = await registerTenant(a);
    for (let i = 0; i < 3; i++)
      expect((await login(a, tenant.email, `wrong-${i}-password`, "10.9.0.1")).status).toBe(401);
    // The e-mail is unknown to b's own database: the failure still counts against it.
    for (let i = 0; i < 2; i++)
      expect((await login(b, tenant.email, `wrong-${i}-password`, "10.9.0.1")).status).toBe(401);
    for (const ctx of [a, b]) {
      const blocked = await login(ctx, tenant.email, tenant.password, "10.9.0.1");
      expect(blocked.status).toBe(429);
      expect(blocked.body.errorCode).toBe("RATE_LIMITED");
      expect(Number(blocked.headers.get("retry-after"))).toBeGreaterThan(0);
      expect(blocked.headers.get("x-ratelimit-limit")).toBe("5");
      expect(blocked.headers.get("x-ratelimit-remaining")).toBe("0");
    }
    expect((await login(a, tenant.email, tenant.password, "10.9.0.3")).status).toBe(200);
  });

  test("15 concurrent wrong passwords through two services against a limit of 5: 5 are checked, 10 refused", async () => {
    const tenant = await registerTenant(a);
    const results = await Promise.all(
      Array.from({ length: 15 }, (_, i) =>
        login(i % 2 === 0 ? a : b, tenant.email, `wrong-${i}-pw`, "10.9.3.1"),
      ),
    );
    expect(results.filter((r) => r.status === 401).length).toBe(5);
    expect(results.filter((r) => r.status === 429).length).toBe(10);
  });

  test("one IP failing on 20 e-mails through both services is limited everywhere; a success clears only its e-mail", async () => {
    const tenant = await registerTenant(b);
    const other = await registerTenant(a);
    expect((await login(a, other.email, "wrong-password-1", "10.9.1.9")).status).toBe(401);
    expect((await login(a, other.email, other.password, "10.9.1.8")).status).toBe(200);
    for (let i = 0; i < 20; i++)
      await login(i % 2 === 0 ? a : b, uniqueEmail(), "guessing-password", "10.9.1.1");
    expect((await login(b, tenant.email, tenant.password, "10.9.1.1")).status).toBe(429);
    expect((await login(b, tenant.email, tenant.password, "10.9.1.2")).status).toBe(200);
  });

  test("while Redis cannot be reached, attempts are counted in the process and the outage is logged once", async () => {
    const client = new RedisClient("redis://127.0.0.1:1", { connectionTimeout: 200, autoReconnect: false });
    const lines: string[] = [];
    const throttle = new RedisLoginThrottle(
      client,
      "unreachable:",
      createLogger("error", (line) => lines.push(line)),
      { windowMs: 60_000, perPair: 2, perClient: 10, perEmail: 10 },
    );
    try {
      expect((await throttle.reserve("x@example.com", "10.9.2.1")).allowed).toBe(true);
      expect((await throttle.reserve("x@example.com", "10.9.2.1")).allowed).toBe(true);
      const third = await throttle.reserve("x@example.com", "10.9.2.1");
      expect(third.allowed).toBe(false);
      expect(lines.filter((line) => line.includes("Redis unreachable")).length).toBe(1);
    } finally {
      client.close();
    }
  });
});
