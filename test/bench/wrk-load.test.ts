/**
 * The serving bench's load generator (wrk, driven by a Lua script) against a plain local server: every
 * request of the list is sent, and `thinkMs` paces each connection instead of sending as fast as answers come.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { runWrk, wrkAvailable } from "../../bench/lib/wrk";

describe.skipIf(!wrkAvailable())("wrk load", () => {
  let server: ReturnType<typeof Bun.serve>;
  const seen = new Map<string, number>();
  beforeAll(() => {
    server = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      fetch: async (request) => {
        const key = `${request.method} ${new URL(request.url).pathname} ${await request.text()}`;
        seen.set(key, (seen.get(key) ?? 0) + 1);
        return new Response("ok");
      },
    });
  });
  afterAll(() => server.stop(true));

  const requests = [
    { method: "GET" as const, path: "/a" },
    { method: "POST" as const, path: "/b", body: '{"x":1}' },
  ];

  test("sends the listed requests, bodies included, and reports the rate it reached", async () => {
    seen.clear();
    const result = await runWrk({
      baseUrl: `http://127.0.0.1:${server.port}`,
      requests,
      connections: 4,
      durationSeconds: 1,
      maxRequests: 1e9,
    });
    expect(result.generator).toBe("wrk");
    expect(result.errors + result.non2xx).toBe(0);
    expect(seen.get("GET /a ")).toBeGreaterThan(0);
    expect(seen.get('POST /b {"x":1}')).toBeGreaterThan(0);
    expect(result.rps).toBeGreaterThan(500);
  });

  test("with thinkMs, each connection pauses about that long between its requests", async () => {
    const result = await runWrk({
      baseUrl: `http://127.0.0.1:${server.port}`,
      requests,
      connections: 4,
      durationSeconds: 2,
      maxRequests: 1e9,
      thinkMs: 50,
    });
    // 4 connections pausing 50 ms on average offer about 80 requests a second; an unpaced run above sends
    // thousands. Generous bounds: the pauses are random and the machine is shared.
    expect(result.errors + result.non2xx).toBe(0);
    expect(result.rps).toBeGreaterThan(20);
    expect(result.rps).toBeLessThan(200);
  });
});
