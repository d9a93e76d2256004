import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { networkInterfaces } from "node:os";
import { OPENAPI_PATH } from "../../src/app";
import { authorizeMetrics } from "../../src/modules/ops/authorize-metrics";
import { AppError } from "../../src/shared/errors";
import { createTestContext, sharedTestContext, type TestContext } from "../helpers/context";

const sample = (text: string, series: string): number | undefined => {
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
};

let shared: TestContext;
beforeAll(async () => {
  shared = await sharedTestContext();
}, 120_000);

describe("GET /metrics", () => {
  test("reports per-route request counts and latency histograms by status class", async () => {
    const ctx = shared;
    const before = await ctx.request("GET", "/metrics");
    const series = 'http_requests_total{method="GET",route="/health",status_class="2xx"}';
    const previous = sample(before.text, series) ?? 0;
    await ctx.request("GET", "/health");
    await ctx.request("GET", "/health");
    await Bun.sleep(5);
    const res = await ctx.request("GET", "/metrics");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/plain; version=0.0.4");
    expect(sample(res.text, series)).toBeGreaterThanOrEqual(previous + 2);
    expect(res.text).toContain("# TYPE http_request_duration_seconds histogram");
    const inf =
      'http_request_duration_seconds_bucket{method="GET",route="/health",status_class="2xx",le="+Inf"}';
    expect(sample(res.text, inf)).toBe(
      sample(
        res.text,
        'http_request_duration_seconds_count{method="GET",route="/health",status_class="2xx"}',
      ),
    );
  });

  test("labels unmatched paths as one series instead of one per path", async () => {
    const ctx = shared;
    await ctx.request("GET", "/no-such-route-for-metrics-test");
    await Bun.sleep(5);
    const res = await ctx.request("GET", "/metrics");
    expect(res.text).not.toContain("no-such-route-for-metrics-test");
    expect(res.text).toContain('route="<unmatched>",status_class="4xx"');
  });

  test("reports job queue depth read from the database, database state and process memory", async () => {
    const ctx = shared;
    const res = await ctx.request("GET", "/metrics");
    expect(res.text).toContain("# TYPE recsys_jobs gauge");
    expect(sample(res.text, "recsys_database_up")).toBe(1);
    expect(sample(res.text, "process_resident_memory_bytes")).toBeGreaterThan(0);
    expect(res.text).toMatch(/^recsys_build_info\{version="\d+\.\d+\.\d+"\} 1$/m);
  });

  test("exposes what other modules observe: training durations, snapshot memory, cache hits", async () => {
    const ctx = await createTestContext();
    try {
      ctx.deps.metrics.observeTraining(12.5);
      ctx.deps.metrics.trainingFailed();
      ctx.deps.metrics.setSnapshotBytes(41, 1000);
      ctx.deps.metrics.setSnapshotBytes(42, 500);
      ctx.deps.metrics.cacheHit("api-keys");
      ctx.deps.metrics.cacheHit("api-keys");
      ctx.deps.metrics.cacheMiss("api-keys");
      const res = await ctx.request("GET", "/metrics");
      expect(sample(res.text, 'recsys_training_duration_seconds_bucket{le="15"}')).toBe(1);
      expect(sample(res.text, 'recsys_training_duration_seconds_bucket{le="5"}')).toBe(0);
      expect(sample(res.text, "recsys_training_duration_seconds_sum")).toBe(12.5);
      expect(sample(res.text, "recsys_training_failures_total")).toBe(1);
      expect(sample(res.text, "recsys_snapshot_memory_bytes")).toBe(1500);
      expect(sample(res.text, 'recsys_snapshot_memory_bytes_by_account{account_id="42"}')).toBe(500);
      expect(sample(res.text, "recsys_snapshots_loaded")).toBe(2);
      expect(sample(res.text, 'recsys_cache_requests_total{cache="api-keys",result="hit"}')).toBe(2);
      expect(sample(res.text, 'recsys_cache_requests_total{cache="api-keys",result="miss"}')).toBe(1);
      ctx.deps.metrics.setSnapshotBytes(42, 0);
      ctx.deps.metrics.setSnapshotBytes("total", 7777);
      const after = await ctx.request("GET", "/metrics");
      expect(after.text).not.toContain('account_id="42"');
      expect(sample(after.text, "recsys_snapshot_memory_bytes")).toBe(7777);
    } finally {
      await ctx.close();
    }
  }, 120_000);

  test("reports how late the request thread's timer fired: a 300 ms block lands above 0.25 s", async () => {
    const ctx = shared;
    const above = (text: string) =>
      (sample(text, 'recsys_event_loop_delay_seconds_bucket{le="+Inf"}') ?? 0) -
      (sample(text, 'recsys_event_loop_delay_seconds_bucket{le="0.25"}') ?? 0);
    const before = await ctx.request("GET", "/metrics");
    expect(before.text).toContain("# TYPE recsys_event_loop_delay_seconds histogram");
    const blockedUntil = performance.now() + 300;
    while (performance.now() < blockedUntil) {
      // Holds the thread, as a long statement on the embedded store would.
    }
    await Bun.sleep(60);
    const after = await ctx.request("GET", "/metrics");
    expect(above(after.text)).toBeGreaterThanOrEqual(above(before.text) + 1);
  });

  test("is listed in the OpenAPI document as an operational route", async () => {
    const ctx = shared;
    const res = await ctx.request("GET", OPENAPI_PATH);
    expect(res.body.paths["/metrics"].get.tags).toEqual(["Operations"]);
    expect(res.body.paths["/metrics"].get.summary).toContain("operational");
    expect(res.body.paths["/ready"].get.tags).toEqual(["Operations"]);
  });
});

describe("GET /metrics protection", () => {
  let ctx: TestContext;
  const token = "metrics-token-for-tests-0123456789";
  beforeAll(async () => {
    ctx = await createTestContext({ METRICS_TOKEN: token });
  }, 120_000);
  afterAll(() => ctx.close());

  test("with METRICS_TOKEN set, a scrape without the bearer token is 401 INVALID_TOKEN", async () => {
    const res = await ctx.request("GET", "/metrics");
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ errorCode: "INVALID_TOKEN" });
    expect(res.body.requestId).toBe(res.headers.get("x-request-id"));
  });

  test("with METRICS_TOKEN set, a wrong token is 401 and the right one is 200", async () => {
    expect((await ctx.request("GET", "/metrics", { token: `${token}x` })).status).toBe(401);
    expect((await ctx.request("GET", "/metrics", { headers: { authorization: token } })).status).toBe(401);
    const ok = await ctx.request("GET", "/metrics", { token });
    expect(ok.status).toBe(200);
    expect(ok.text).toContain("http_requests_total");
  });

  test("without METRICS_TOKEN, a request forwarded by a proxy is 403 even from loopback", async () => {
    const open = shared;
    const res = await open.request("GET", "/metrics", { headers: { "x-forwarded-for": "203.0.113.9" } });
    expect(res.status).toBe(403);
    expect(res.body.errorCode).toBe("FORBIDDEN");
  });

  test("without METRICS_TOKEN, only loopback peers are served", () => {
    const allow = (peerAddress: string | null) =>
      authorizeMetrics({
        token: undefined,
        caller: { authorization: null, peerAddress, forwarded: false },
      });
    for (const local of ["127.0.0.1", "::1", "::ffff:127.0.0.1", null])
      expect(() => allow(local)).not.toThrow();
    for (const remote of ["10.0.0.5", "192.168.1.20", "2001:db8::1", "::ffff:10.0.0.5"]) {
      expect(() => allow(remote)).toThrow(AppError);
    }
  });
});

describe("GET /metrics over a real socket", () => {
  let ctx: TestContext;
  let port = 0;
  beforeAll(async () => {
    ctx = await createTestContext({ HOST: "0.0.0.0" });
    ctx.app.listen({ port: 0, hostname: "0.0.0.0" });
    port = ctx.app.server?.port ?? 0;
  }, 120_000);
  afterAll(async () => {
    await ctx.app.stop();
    await ctx.close();
  });

  test("a client on 127.0.0.1 is served without a token", async () => {
    const res = await fetch(`http://127.0.0.1:${port}/metrics`);
    expect(res.status).toBe(200);
    expect(await res.text()).toContain("process_resident_memory_bytes");
  });

  test("a client reaching the service on a non-loopback address is 403", async () => {
    const external = Object.values(networkInterfaces())
      .flat()
      .find((nic) => nic !== undefined && nic.family === "IPv4" && !nic.internal);
    if (external === undefined) {
      console.warn("skipped: this machine has no non-loopback IPv4 address");
      return;
    }
    const res = await fetch(`http://${external.address}:${port}/metrics`);
    expect(res.status).toBe(403);
  });
});
