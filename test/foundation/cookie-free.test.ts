import { describe, expect, test } from "bun:test";
import { sharedTestContext } from "../helpers/context";

describe("request handling", () => {
  test("no API route reads cookies: none of them uses one, and parsing the header costs every request", async () => {
    const { app } = await sharedTestContext();
    const api = app.routes.filter((route) => route.path.startsWith("/api/v1/"));
    expect(api.length).toBeGreaterThan(20);
    const reading = api
      .filter((route) => String(route.compile()).includes("parseCookie"))
      .map((route) => `${route.method} ${route.path}`);
    expect(reading).toEqual([]);
  });
});
