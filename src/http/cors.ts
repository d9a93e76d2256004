/**
 * CORS, as the contract's Identity section says. Two kinds of route:
 *
 * - the routes a publishable key may call (recommendations, `POST /interactions/`) answer a preflight for
 *   any origin, because the preflight carries no key and so cannot be judged; the answer itself grants the
 *   origin only when the key sent is a publishable key whose `allowedDomains` admit it (auth.ts calls
 *   `grantKeyOrigin` once the key is known). A browser therefore reads an answer only on a shop page the
 *   key was made for; everywhere else it sees a CORS failure.
 * - every other route grants CORS only to the origins listed in `CORS_ORIGINS`.
 *
 * Preflights are answered in `onRequest`, before routing, authentication and the rate limits (they carry no
 * credentials and cost nothing to answer). Grants are written into the request's `set.headers`, which
 * Elysia merges into the handler's answer and into the error answer alike, so a 401/403/429 to a granted
 * origin is readable by the page that caused it.
 */
import { Elysia } from "elysia";

const PUBLISHABLE_ALLOW_HEADERS = "Content-Type, X-API-Key";
/** Other routes are called by first-party front ends, which also send the dashboard's bearer token. */
const TRUSTED_ALLOW_HEADERS = "Content-Type, X-API-Key, Authorization";
const TRUSTED_ALLOW_METHODS = "GET, POST, PUT, PATCH, DELETE";
/** Headers a page's script may read: the request id to quote, and what a client needs to back off. */
const EXPOSE_HEADERS =
  "X-Request-Id, Retry-After, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, Location";
/** Two hours: Chromium's ceiling for caching a preflight; a longer value buys nothing. */
export const PREFLIGHT_MAX_AGE_SECONDS = 7200;

const RECOMMENDATIONS_PREFIX = "/api/v1/recommendations/";
const INTERACTIONS_PATHS = new Set(["/api/v1/interactions", "/api/v1/interactions/"]);

/**
 * The methods a publishable key may use on `path`, or undefined when it may not call it at all. Kept in
 * step with the routes' `auth.scope` by test/identity/cors.test.ts, which calls every route with a
 * publishable key.
 */
export function publishableMethods(path: string): "GET, POST" | "POST" | undefined {
  if (path.startsWith(RECOMMENDATIONS_PREFIX)) return "GET, POST";
  if (INTERACTIONS_PATHS.has(path)) return "POST";
  return undefined;
}

interface CorsState {
  readonly origin: string;
  readonly set: { headers: Record<string, string | number> };
}

const CORS = Symbol("cors");
type WithCors = Request & { [CORS]?: CorsState };

/** The normalised `scheme://host[:port]` of an Origin header, or undefined for `null` and non-URLs. */
function parseOrigin(value: string): URL | undefined {
  if (value === "null") return undefined;
  try {
    const url = new URL(value);
    return url.origin === value ? url : undefined;
  } catch {
    return undefined;
  }
}

function grant(set: CorsState["set"], origin: string): void {
  set.headers["access-control-allow-origin"] = origin;
  set.headers["access-control-expose-headers"] = EXPOSE_HEADERS;
  addVary(set);
}

function addVary(set: CorsState["set"]): void {
  const vary = set.headers.vary;
  if (vary === undefined || vary === "") set.headers.vary = "Origin";
  else if (!/(^|,\s*)origin(\s*,|$)/i.test(String(vary))) set.headers.vary = `${vary}, Origin`;
}

/**
 * Called by the auth plugin when a publishable key is known: grants the request's Origin when `admits` (the
 * very check that lets the key through from that origin) passes. A secret key is never meant for a browser
 * and grants nothing.
 */
export function grantKeyOrigin(request: Request, admits: (origin: string) => boolean): void {
  const state = (request as WithCors)[CORS];
  if (state === undefined) return;
  if (parseOrigin(state.origin) !== undefined && admits(state.origin)) grant(state.set, state.origin);
}

/** The CORS plugin; `trustedOrigins` is the config's `corsOrigins` (exact `scheme://host[:port]` values). */
export function corsPlugin(trustedOrigins: readonly string[]) {
  const trusted = new Set(trustedOrigins);
  return new Elysia({ name: "cors" }).onRequest(({ request, set }) => {
    const origin = request.headers.get("origin");
    if (origin === null) return;
    const path = pathOf(request.url);
    const methods = publishableMethods(path);
    const isTrusted = trusted.has(origin);
    if (request.method === "OPTIONS" && request.headers.has("access-control-request-method")) {
      return preflight(origin, methods, isTrusted);
    }
    if (isTrusted) grant(set, origin);
    else if (methods !== undefined) {
      // The answer depends on the Origin (granted or not), so shared caches must key on it.
      addVary(set);
      (request as WithCors)[CORS] = { origin, set: set as CorsState["set"] };
    }
  });
}

function preflight(origin: string, publishable: string | undefined, isTrusted: boolean): Response {
  // X-Request-Id (and HSTS) reach this answer too: Elysia merges the request's `set.headers` into it.
  const headers: Record<string, string> = { vary: "Origin" };
  // A trusted origin gets the wider grant; any other origin only the publishable routes' narrow one.
  if (isTrusted || (publishable !== undefined && parseOrigin(origin) !== undefined)) {
    headers["access-control-allow-origin"] = origin;
    headers["access-control-allow-methods"] = isTrusted ? TRUSTED_ALLOW_METHODS : (publishable as string);
    headers["access-control-allow-headers"] = isTrusted ? TRUSTED_ALLOW_HEADERS : PUBLISHABLE_ALLOW_HEADERS;
    headers["access-control-max-age"] = String(PREFLIGHT_MAX_AGE_SECONDS);
  }
  // Without a grant the answer is still a plain 204: the browser refuses the call, and nothing is revealed.
  return new Response(null, { status: 204, headers });
}

function pathOf(url: string): string {
  const start = url.indexOf("/", url.indexOf("//") + 2);
  if (start < 0) return "/";
  const end = url.indexOf("?", start);
  return end < 0 ? url.slice(start) : url.slice(start, end);
}
