/**
 * What a failing statement becomes: the caller's data → 422, an unreachable database → 503 with Retry-After
 * and /health 503, anything else a 500 logged by code, route and request id, never by the values involved.
 * Real statements on the real store (PGlite, or Postgres under scripts/test.ts).
 */
import { afterAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { Elysia } from "elysia";
import postgres from "postgres";
import { ELYSIA_CONFIG, httpKernel } from "../../src/http/kernel";
import { createLogger } from "../../src/shared/logger";
import { createTestContext, sharedTestContext, type TestContext, usingPostgres } from "../helpers/context";
import { registerTenant } from "../helpers/tenant";

const PERSONAL = "victim.person@example.com";

async function kernelOverStore(ctx: TestContext) {
  const logs: string[] = [];
  const db = ctx.deps.database.db;
  const app = new Elysia(ELYSIA_CONFIG)
    .use(httpKernel(createLogger("debug", (line) => logs.push(line))))
    .get("/data-error", async () => db.execute(sql`select ${PERSONAL}::bigint`))
    .get("/query-error", async () => db.execute(sql`select * from no_such_table where email = ${PERSONAL}`));
  const call = async (path: string) => {
    const res = await app.handle(new Request(`http://localhost${path}`));
    return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, any> };
  };
  return { logs, call };
}

describe("database errors", () => {
  test("a data exception (SQLSTATE 22xxx) answers 422, never 500", async () => {
    const { call } = await kernelOverStore(await sharedTestContext());
    const res = await call("/data-error");
    expect(res.status).toBe(422);
    expect(res.body.errorCode).toBe("VALIDATION_ERROR");
    expect(JSON.stringify(res.body)).not.toContain(PERSONAL);
  });

  test("a failed query logs its code, route and request id, never its SQL parameters", async () => {
    const { call, logs } = await kernelOverStore(await sharedTestContext());
    const res = await call("/query-error");
    expect(res.status).toBe(500);
    const text = logs.join("\n");
    expect(text).not.toContain(PERSONAL);
    expect(text).not.toContain("params:");
    const line = logs.map((l) => JSON.parse(l)).find((l) => l.level === "error");
    expect(line).toMatchObject({ requestId: res.body.requestId, route: "/query-error" });
    expect(line.error.code).toBe("42P01");
  });

  test("the service's own log holds no personal value after failing requests", async () => {
    const ctx = await sharedTestContext();
    const tenant = await registerTenant(ctx);
    const failing = [
      ctx.request("POST", "/api/v1/products/", {
        apiKey: tenant.apiKey,
        body: { externalId: PERSONAL, name: PERSONAL, price: 1e308 * 10, category: "c" },
      }),
      ctx.request("POST", "/api/v1/interactions/", {
        apiKey: tenant.apiKey,
        body: {
          external_user_id: PERSONAL,
          external_product_id: PERSONAL,
          interaction_type: "VIEW",
          timestamp: "0000-01-01T00:00:00Z",
        },
      }),
      ctx.request("GET", `/api/v1/end-users/external/${encodeURIComponent(PERSONAL)}`, {
        apiKey: tenant.apiKey,
      }),
      ctx.request("GET", `/api/v1/products/?category=${encodeURIComponent(PERSONAL)}&skip=1e20`, {
        apiKey: tenant.apiKey,
      }),
    ];
    for (const res of await Promise.all(failing)) expect(res.status).toBeLessThan(500);
    await Bun.sleep(20);
    expect(ctx.logs.join("\n")).not.toContain(PERSONAL);
  });
});

describe("database unreachable", () => {
  const contexts: TestContext[] = [];
  afterAll(async () => {
    for (const ctx of contexts) await ctx.close().catch(() => {});
  });

  test("PGlite closed under the service: 503 SERVICE_UNAVAILABLE with Retry-After, /health 503", async () => {
    if (usingPostgres()) return;
    const ctx = await createTestContext();
    contexts.push(ctx);
    const tenant = await registerTenant(ctx);
    expect((await ctx.request("GET", "/health")).status).toBe(200);
    await ctx.deps.database.close();
    const res = await ctx.request("GET", "/api/v1/products/", { apiKey: tenant.apiKey });
    expect(res.status).toBe(503);
    expect(res.body.errorCode).toBe("SERVICE_UNAVAILABLE");
    expect(Number(res.headers.get("retry-after"))).toBeGreaterThan(0);
    const health = await ctx.request("GET", "/health");
    expect(health.status).toBe(503);
    expect(health.body).toMatchObject({
      status: "degraded",
      database: { state: "down" },
      errorCode: "SERVICE_UNAVAILABLE",
      message: expect.any(String),
      requestId: health.headers.get("x-request-id"),
    });
    expect(Number(health.headers.get("retry-after"))).toBeGreaterThan(0);
  });

  test("Postgres refusing connections: 503 with Retry-After at once, /health 503, and back up after", async () => {
    if (!usingPostgres()) return;
    const base = process.env.TEST_DATABASE_URL!;
    const admin = postgres(base, { max: 1, onnotice: () => {} });
    const name = `${new URL(base).pathname.slice(1)}_down_${process.pid}`;
    await admin.unsafe(`drop database if exists "${name}" with (force)`);
    await admin.unsafe(`create database "${name}"`);
    const url = new URL(base);
    url.pathname = `/${name}`;
    try {
      const ctx = await createTestContext({ DATABASE_URL: url.toString() });
      contexts.push(ctx);
      const tenant = await registerTenant(ctx);
      expect((await ctx.request("GET", "/api/v1/products/", { apiKey: tenant.apiKey })).status).toBe(200);
      expect((await ctx.request("GET", "/health")).status).toBe(200);

      await admin.unsafe(`alter database "${name}" allow_connections false`);
      await admin.unsafe(
        `select pg_terminate_backend(pid) from pg_stat_activity where datname = '${name}' and pid <> pg_backend_pid()`,
      );
      const res = await ctx.request("GET", "/api/v1/products/", { apiKey: tenant.apiKey });
      expect(res.status).toBe(503);
      expect(res.body).toMatchObject({ errorCode: "SERVICE_UNAVAILABLE", requestId: expect.any(String) });
      expect(Number(res.headers.get("retry-after"))).toBeGreaterThan(0);
      // Right away, not after the next background probe.
      const health = await ctx.request("GET", "/health");
      expect(health.status).toBe(503);
      expect(health.body).toMatchObject({ errorCode: "SERVICE_UNAVAILABLE", database: { state: "down" } });
      expect(Number(health.headers.get("retry-after"))).toBeGreaterThan(0);
      expect(ctx.logs.some((line) => line.includes("Failed query"))).toBe(false);

      await admin.unsafe(`alter database "${name}" allow_connections true`);
      let healthy = 0;
      for (let i = 0; i < 100 && healthy !== 200; i++) {
        await ctx.deps.health.probe();
        healthy = (await ctx.request("GET", "/health")).status;
        if (healthy !== 200) await Bun.sleep(100);
      }
      expect(healthy).toBe(200);
      expect((await ctx.request("GET", "/api/v1/products/", { apiKey: tenant.apiKey })).status).toBe(200);
    } finally {
      await admin.unsafe(`alter database "${name}" allow_connections true`).catch(() => {});
      for (const ctx of contexts.splice(0)) await ctx.close().catch(() => {});
      await admin.unsafe(`drop database if exists "${name}" with (force)`).catch(() => {});
      await admin.end({ timeout: 5 });
    }
  });
});
