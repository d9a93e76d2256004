import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createTestContext, sharedTestContext, type TestContext } from "../helpers/context";

let shared: TestContext;
beforeAll(async () => {
  shared = await sharedTestContext();
}, 120_000);

describe("GET /ready", () => {
  test("is 200 ready when the database answered its probe; snapshots are not configured yet", async () => {
    const ctx = shared;
    const res = await ctx.request("GET", "/ready");
    expect(res.status).toBe(200);
    expect(res.body.status).toBe("ready");
    expect(res.body.checks.database.state).toBe("ok");
    expect(res.body.checks.shutdown.state).toBe("ok");
    expect(["ok", "not_configured"]).toContain(res.body.checks.snapshots.state);
  });

  test("needs no authentication and carries X-Request-Id", async () => {
    const ctx = shared;
    const res = await ctx.request("GET", "/ready", { apiKey: "sk_live_not_a_key" });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-request-id")).toBeTruthy();
  });
});

describe("GET /ready when something is not ready", () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await createTestContext();
  }, 120_000);
  afterAll(() => ctx.close());

  test("a registered component that is failing makes it 503 not_ready with the same body shape", async () => {
    let loaded = false;
    ctx.deps.readiness.register("snapshots", () =>
      loaded ? { state: "ok", detail: "3 loaded" } : { state: "failing", detail: "loading" },
    );
    const res = await ctx.request("GET", "/ready");
    expect(res.status).toBe(503);
    expect(res.body.status).toBe("not_ready");
    expect(res.body.checks.snapshots).toEqual({ state: "failing", detail: "loading" });
    loaded = true;
    expect((await ctx.request("GET", "/ready")).status).toBe(200);
  });

  test("a check that throws counts as failing instead of breaking the route", async () => {
    ctx.deps.readiness.register("flaky", () => {
      throw new Error("boom");
    });
    const res = await ctx.request("GET", "/ready");
    expect(res.status).toBe(503);
    expect(res.body.checks.flaky.state).toBe("failing");
    ctx.deps.readiness.register("flaky", () => ({ state: "ok", detail: "fine" }));
  });

  test("a stale database probe is reported as failing", () => {
    const later = Date.now() + 10 * 60_000;
    const { ready, checks } = ctx.deps.readiness.evaluate(later);
    expect(ready).toBe(false);
    expect(checks.database?.detail).toContain("last probe answered");
  });

  test("after SIGTERM handling starts it is 503 so load balancers drain this process", async () => {
    ctx.deps.readiness.markStopping();
    const res = await ctx.request("GET", "/ready");
    expect(res.status).toBe(503);
    expect(res.body.checks.shutdown.state).toBe("failing");
  });
});
