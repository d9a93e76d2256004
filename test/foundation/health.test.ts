import { describe, expect, test } from "bun:test";
import { OPENAPI_PATH } from "../../src/app";
import { sharedTestContext } from "../helpers/context";

describe("GET /health", () => {
  test("answers status, version and the database state without authentication", async () => {
    const ctx = await sharedTestContext();
    const res = await ctx.request("GET", "/health");
    expect(res.status).toBe(200);
    expect(res.body.status).toBe("ok");
    expect(res.body.version).toMatch(/^\d+\.\d+\.\d+/);
    expect(res.body.database.state).toBe("up");
    expect(["pglite", "postgres"]).toContain(res.body.database.kind);
  });

  test("carries X-Request-Id and echoes a well-formed incoming id", async () => {
    const ctx = await sharedTestContext();
    const fresh = await ctx.request("GET", "/health");
    expect(fresh.headers.get("x-request-id")).toBeTruthy();
    const echoed = await ctx.request("GET", "/health", { headers: { "x-request-id": "abc-123" } });
    expect(echoed.headers.get("x-request-id")).toBe("abc-123");
    const rejected = await ctx.request("GET", "/health", {
      headers: { "x-request-id": "bad id with spaces" },
    });
    expect(rejected.headers.get("x-request-id")).not.toBe("bad id with spaces");
  });

  test("reads the database state from the background probe, not per request", async () => {
    const ctx = await sharedTestContext();
    const first = await ctx.request("GET", "/health");
    const second = await ctx.request("GET", "/health");
    expect(second.body.database.checkedAt).toBe(first.body.database.checkedAt);
  });

  test("sends Strict-Transport-Security only when the request came over HTTPS", async () => {
    const ctx = await sharedTestContext();
    const plain = await ctx.request("GET", "/health");
    expect(plain.headers.get("strict-transport-security")).toBeNull();
    const proxied = await ctx.request("GET", "/health", { headers: { "x-forwarded-proto": "https" } });
    expect(proxied.headers.get("strict-transport-security")).toContain("max-age=");
  });

  test("logs one JSON line per request with method, route, status, ms and requestId", async () => {
    const ctx = await sharedTestContext();
    const res = await ctx.request("GET", "/health", { headers: { "x-request-id": "log-line-check" } });
    expect(res.status).toBe(200);
    await Bun.sleep(5);
    const line = ctx.logs.map((l) => JSON.parse(l)).find((l) => l.requestId === "log-line-check");
    expect(line).toMatchObject({ msg: "request", method: "GET", route: "/health", status: 200 });
    expect(typeof line.ms).toBe("number");
  });
});

describe("OpenAPI description", () => {
  test(`is served at ${OPENAPI_PATH} as OpenAPI 3 with the health route`, async () => {
    const ctx = await sharedTestContext();
    const res = await ctx.request("GET", OPENAPI_PATH);
    expect(res.status).toBe(200);
    expect(res.body.openapi).toMatch(/^3\./);
    expect(res.body.paths["/health"].get).toBeDefined();
  });

  test("has a human-readable documentation page", async () => {
    const ctx = await sharedTestContext();
    const res = await ctx.request("GET", "/api/v1/docs");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/html");
  });
});
