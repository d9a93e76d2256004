/**
 * The checks of the values a request carries (its URL text, its body as read, its numeric path and query
 * parameters) and when they are answered. The contract's order is authentication (401), then permission,
 * scope, origin and plan (403), then validation (422): on a route that authenticates, its authenticating
 * transform (the auth plugin's) has them run once the caller is admitted (kernel.ts, checkValuesAfterAdmission);
 * on a public route the kernel runs them at once. Either way they run before Elysia validates the route's
 * schemas, and nothing reads a value before them: authentication reads headers, the guards the route's pattern.
 */
import { AppError } from "../shared/errors";
import { RefusedBody, UNSTORABLE_MESSAGE } from "./body";
import type { RouteShape } from "./openapi-errors";
import { checkNumericParameters, type NumericParameter, numericParameters } from "./validation-issues";

/** What the checks need to know of a route, compiled once from its hooks. */
export interface RouteChecks {
  /** The route has an authenticating transform, which has the values checked once the caller is admitted. */
  readonly authenticated: boolean;
  /** The route reads a body: a route without one ignores whatever was sent, refused or not. */
  readonly takesBody: boolean;
  readonly path: readonly NumericParameter[];
  readonly query: readonly NumericParameter[];
}

const authenticatingHooks = new WeakSet<object>();

/**
 * Marks a route's authenticating transform (the auth plugin's, the metrics scrape's): the kernel leaves the
 * route's values to it, and it must call checkValuesAfterAdmission once it has admitted the caller.
 */
export function markAuthenticatingHook<T extends object>(hook: T): T {
  authenticatingHooks.add(hook);
  return hook;
}

const hookFunction = (hook: unknown): unknown =>
  typeof hook === "object" && hook !== null ? (hook as { fn?: unknown }).fn : hook;

export function compileRouteChecks(route: RouteShape): RouteChecks {
  const { hooks } = route;
  const transforms = Array.isArray(hooks.transform) ? hooks.transform : [hooks.transform];
  return {
    authenticated: transforms.some((hook) => {
      const fn = hookFunction(hook);
      return typeof fn === "function" && authenticatingHooks.has(fn);
    }),
    takesBody: hooks.body !== undefined,
    path: numericParameters(hooks.params),
    query: numericParameters(hooks.query),
  };
}

/**
 * NUL in the path or query string: Postgres stores no NUL in text, and no id or filter of ours holds one.
 * (Unpaired surrogates cannot be percent-encoded as UTF-8; the router refuses those.)
 */
export function urlRefusal(url: string): AppError | undefined {
  const at = url.search(/%00/i);
  if (at === -1) return undefined;
  const query = url.indexOf("?");
  return new AppError("VALIDATION_ERROR", "Request validation failed", {
    detail: [
      {
        loc: [query !== -1 && at > query ? "query" : "path"],
        msg: UNSTORABLE_MESSAGE,
        type: "value_error.str",
      },
    ],
  });
}

/**
 * Throws the first refusal of the request's values: its URL, its body, its path ids (404 out of range), its
 * numeric query values. Without `checks` (a route the table does not know) every refused body is answered.
 */
export function checkRequestValues(
  refusedUrl: AppError | undefined,
  checks: RouteChecks | undefined,
  params: unknown,
  query: unknown,
  body: unknown,
): void {
  if (refusedUrl !== undefined) throw refusedUrl;
  if (body instanceof RefusedBody && (checks === undefined || checks.takesBody)) throw body.error;
  if (checks === undefined) return;
  if (checks.path.length > 0) checkNumericParameters("path", checks.path, params as Record<string, unknown>);
  if (checks.query.length > 0)
    checkNumericParameters("query", checks.query, query as Record<string, unknown>);
}
