import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql } from "drizzle-orm";
import { FallbackRateLimiter } from "../../src/shared/rate-limit";
import { createTestContext, type TestContext } from "../helpers/context";
import { trackTempDir } from "../helpers/temp-dirs";
import { registerTenant } from "../helpers/tenant";

const REDIS = new URL(process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379");

/** A TCP proxy in front of the real Redis that the test can cut and restore on the same port. */
class CuttableProxy {
  private server: net.Server | undefined;
  private readonly sockets = new Set<net.Socket>();
  port = 0;

  async open(): Promise<void> {
    const server = net.createServer((client) => {
      const upstream = net.connect(Number(REDIS.port || 6379), REDIS.hostname);
      for (const socket of [client, upstream]) {
        this.sockets.add(socket);
        socket.on("error", () => {});
        socket.on("close", () => this.sockets.delete(socket));
      }
      client.pipe(upstream);
      upstream.pipe(client);
    });
    await new Promise<void>((resolve) => server.listen(this.port, "127.0.0.1", () => resolve()));
    this.port = (server.address() as net.AddressInfo).port;
    this.server = server;
  }

  async cut(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  }
}

const proxy = new CuttableProxy();
let ctx: TestContext;

beforeAll(async () => {
  await proxy.open();
  const plans = join(tmpdir(), `plans-${crypto.randomUUID()}.json`);
  trackTempDir(plans);
  const limits = {
    requestsPerMinute: 7,
    monthlyRequests: 100000,
    maxProducts: 10,
    maxEndUsers: 10,
    trainingsPerDay: 1,
  };
  writeFileSync(
    plans,
    JSON.stringify({ FREE: { name: "FREE", priceMonthly: 0, currency: "USD", limits, features: [] } }),
  );
  ctx = await createTestContext({
    REDIS_URL: `redis://127.0.0.1:${proxy.port}`,
    REDIS_KEY_PREFIX: `test:${crypto.randomUUID()}:`,
    PLANS_FILE: plans,
  });
  // One minute window for the whole test, away from its edges.
  const fixed = Math.floor(Date.now() / 60_000) * 60_000 + 7 * 60_000 + 1_000;
  ctx.deps.planEnforcer.clock = () => fixed;
});
afterAll(async () => {
  await ctx.close();
  await proxy.cut();
});

const burst = async (apiKey: string, n: number) => {
  const statuses: number[] = [];
  for (let i = 0; i < n; i++)
    statuses.push((await ctx.request("GET", "/api/v1/products/", { apiKey })).status);
  return statuses;
};

const outageLines = () => ctx.logs.filter((line) => line.includes("Redis unreachable; rate limits"));

describe("rate limits when Redis becomes unreachable", () => {
  test("fall back to this process's limiter (not open), log the outage once, keep usage, and return to Redis after it", async () => {
    const limiter = ctx.deps.rateLimiter as FallbackRateLimiter;
    expect(limiter).toBeInstanceOf(FallbackRateLimiter);
    const tenant = await registerTenant(ctx);
    const before = await registerTenant(ctx);
    expect((await burst(before.apiKey, 3)).every((s) => s === 200)).toBe(true);
    expect(limiter.degraded).toBe(false);

    await proxy.cut();
    const during = await burst(tenant.apiKey, 40);
    // The per-minute limit (7) still holds, counted in this process.
    expect(during.filter((s) => s === 200).length).toBe(7);
    expect(during.filter((s) => s === 429).length).toBe(33);
    expect(limiter.degraded).toBe(true);
    expect(outageLines().length).toBe(1);
    // Usage counters hold the admitted requests in the process and write them to the database directly.
    await ctx.deps.usageMeter.flush();
    const [usage] = await ctx.deps.database.rows<{ n: number }>(
      sql`select coalesce(sum(requests), 0)::int as n from usage_daily where account_id = ${tenant.accountId}`,
    );
    expect(usage!.n).toBe(7);
    expect(ctx.logs.filter((line) => line.includes("Redis unreachable; usage counters")).length).toBe(1);
    expect(ctx.logs.some((line) => line.includes("usage counter update failed"))).toBe(false);

    await proxy.open();
    const deadline = Date.now() + 20_000;
    while (limiter.degraded && Date.now() < deadline) {
      await burst(before.apiKey, 1);
      await Bun.sleep(250);
    }
    expect(limiter.degraded).toBe(false);
    expect(ctx.logs.some((line) => line.includes("Redis reachable again; rate limits"))).toBe(true);
    expect(outageLines().length).toBe(1);
    // Counted in Redis again: this tenant's earlier Redis count (3 + the probes) still applies there.
    const after = await burst(before.apiKey, 10);
    expect(after.filter((s) => s === 200).length).toBeLessThan(7);
  }, 60_000);
});
