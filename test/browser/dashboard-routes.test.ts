/**
 * The routes serving the dashboard, in-process (the files bundled from source as `bun run start` does):
 * the shell on every app path, hashed assets, the `/` redirect for browsers only, and what they refuse.
 */
import { describe, expect, test } from "bun:test";
import { gunzipSync } from "node:zlib";
import { sharedTestContext } from "../helpers/context";

const ctx = await sharedTestContext();

async function shellAndAssets(): Promise<{ html: string; script: string; stylesheet: string }> {
  const shell = await ctx.request("GET", "/dashboard");
  const script = /\/dashboard\/assets\/(app-[\w]+\.js)/.exec(shell.text)?.[1];
  const stylesheet = /\/dashboard\/assets\/(app-[\w]+\.css)/.exec(shell.text)?.[1];
  if (script === undefined || stylesheet === undefined) throw new Error(`no assets in ${shell.text}`);
  return { html: shell.text, script, stylesheet };
}

describe("dashboard routes", () => {
  test("/dashboard and any path under it answer the HTML shell, not cached, with a strict CSP", async () => {
    const shell = await ctx.request("GET", "/dashboard");
    expect(shell.status).toBe(200);
    expect(shell.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(shell.headers.get("cache-control")).toBe("no-cache");
    const csp = shell.headers.get("content-security-policy") ?? "";
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(shell.headers.get("x-request-id")).not.toBeNull();
    const deep = await ctx.request("GET", "/dashboard/data/end-users/someone");
    expect(deep.status).toBe(200);
    expect(deep.text).toBe(shell.text);
  });

  test("the script and stylesheet are served with long-lived caching, gzipped when asked", async () => {
    const { script, stylesheet } = await shellAndAssets();
    const js = await ctx.request("GET", `/dashboard/assets/${script}`);
    expect(js.status).toBe(200);
    expect(js.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    expect(js.headers.get("cache-control")).toContain("immutable");
    // No CDN and no font from elsewhere: the bundle names no other origin to load from.
    expect(js.text).not.toMatch(/https?:\/\/(?:cdn|unpkg|fonts\.)/);
    const css = await ctx.request("GET", `/dashboard/assets/${stylesheet}`);
    expect(css.headers.get("content-type")).toBe("text/css; charset=utf-8");
    expect(css.text).not.toContain("@import");
    expect(css.text).not.toContain("url(http");

    const response = await ctx.app.handle(
      new Request(`http://localhost/dashboard/assets/${script}`, { headers: { "accept-encoding": "gzip" } }),
    );
    expect(response.headers.get("content-encoding")).toBe("gzip");
    const unzipped = gunzipSync(new Uint8Array(await response.arrayBuffer())).toString("utf8");
    expect(unzipped).toBe(js.text);
  });

  test("a browser asking for / is redirected to /dashboard; an API client keeps the JSON 404", async () => {
    const browser = await ctx.request("GET", "/", { headers: { accept: "text/html,application/xhtml+xml" } });
    expect(browser.status).toBe(302);
    expect(browser.headers.get("location")).toBe("/dashboard");
    expect(browser.headers.get("x-request-id")).not.toBeNull();
    const withQuery = await ctx.request("GET", "/?utm_source=mail", { headers: { accept: "text/html" } });
    expect(withQuery.status).toBe(302);
    // Only `/` itself: other paths and other methods answer as before.
    expect((await ctx.request("GET", "/nothing-here", { headers: { accept: "text/html" } })).status).toBe(404);
    const post = await ctx.request("POST", "/", { headers: { accept: "text/html" } });
    expect(post.status).toBe(404);
    const client = await ctx.request("GET", "/");
    expect(client.status).toBe(404);
    expect(client.body).toMatchObject({ errorCode: "NOT_FOUND", message: "No route for GET /" });
    expect(client.body.requestId).toBe(client.headers.get("x-request-id"));
  });

  test("unknown assets, the shell by asset name and path tricks answer the JSON 404", async () => {
    for (const path of [
      "/dashboard/assets/app-missing.js",
      "/dashboard/assets/index.html",
      "/dashboard/assets/..%2F..%2Fpackage.json",
      "/dashboard/assets/%2e%2e%2fsrc%2fconfig.ts",
    ]) {
      const response = await ctx.request("GET", path);
      expect({ path, status: response.status }).toEqual({ path, status: 404 });
      expect(response.body.errorCode).toBe("NOT_FOUND");
    }
  });

  test("the dashboard routes stay out of the public OpenAPI document", async () => {
    const doc = await ctx.request<{ paths: Record<string, unknown> }>("GET", "/api/v1/public-openapi.json");
    expect(
      Object.keys(doc.body.paths).filter((path) => path === "/" || path.startsWith("/dashboard")),
    ).toEqual([]);
  });
});
