import { Elysia } from "elysia";
import { ELYSIA_CONFIG } from "../../http/kernel";
import { AppError, notFound } from "../../shared/errors";
import type { ServiceModule } from "../module";
import { dashboardFiles, type ServedFile } from "./assets";

/**
 * The operator's dashboard: a single-page app at /dashboard that calls this same API with the signed-in
 * user's token. Every path under /dashboard answers the HTML shell (the app routes in the browser); its
 * script and stylesheet have content-hashed names, so they are cached for good.
 */
const SECURITY_HEADERS = {
  "content-security-policy":
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; " +
    "connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; " +
    "form-action 'self'",
  "x-content-type-options": "nosniff",
  "referrer-policy": "same-origin",
};

const hidden = { detail: { hide: true } };

function serve(file: ServedFile, request: Request, cacheControl: string): Response {
  const gzip = /\bgzip\b/.test(request.headers.get("accept-encoding") ?? "");
  const headers: Record<string, string> = {
    ...SECURITY_HEADERS,
    "content-type": file.contentType,
    "cache-control": cacheControl,
    vary: "Accept-Encoding",
  };
  if (gzip) headers["content-encoding"] = "gzip";
  return new Response(gzip ? file.gzipped : file.body, { headers });
}

async function shell(request: Request): Promise<Response> {
  const index = (await dashboardFiles()).get("index.html");
  if (index === undefined) throw new AppError("INTERNAL_ERROR", "The dashboard is missing from this build");
  return serve(index, request, "no-cache");
}

/**
 * Browsers asking for `/` are sent to the dashboard. This is a request hook rather than a route so that
 * API clients keep exactly what `/` answered before (404 for every method; a GET route would turn the
 * other methods into 405s). Only a request whose path is `/` pays more than one character comparison.
 */
function redirectBrowsersAtRoot(request: Request): Response | undefined {
  const url = request.url;
  const path = url.indexOf("/", url.indexOf("//") + 2);
  if (path < 0 || (url.length !== path + 1 && url[path + 1] !== "?")) return undefined;
  if (request.method !== "GET" && request.method !== "HEAD") return undefined;
  if (!(request.headers.get("accept") ?? "").includes("text/html")) return undefined;
  return new Response(null, { status: 302, headers: { location: "/dashboard" } });
}

function dashboardRoutes() {
  return new Elysia({ ...ELYSIA_CONFIG, name: "dashboard" })
    .onRequest(({ request }) => redirectBrowsersAtRoot(request))
    .get("/dashboard", ({ request }) => shell(request), hidden)
    .get(
      "/dashboard/assets/:name",
      async ({ params, request }) => {
        const file = params.name === "index.html" ? undefined : (await dashboardFiles()).get(params.name);
        if (file === undefined) throw notFound("Dashboard file");
        return serve(file, request, "public, max-age=31536000, immutable");
      },
      hidden,
    )
    .get("/dashboard/*", ({ request }) => shell(request), hidden);
}

export const dashboardModule: ServiceModule = {
  name: "dashboard",
  routes: dashboardRoutes,
};
