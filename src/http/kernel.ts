/**
 * The HTTP kernel every route runs inside: request ids, the request log line, HSTS, the body-size limit and
 * the one mapping from errors to `{message, errorCode, requestId}` responses.
 */
import { Elysia, type ValidationError } from "elysia";
import { classifyDatabaseError, databaseErrorCode } from "../db/errors";
import { AppError, ERROR_STATUS } from "../shared/errors";
import type { Logger } from "../shared/logger";
import { EMPTY_BODY, MAX_BODY_BYTES, parseRequestBody } from "./body";
import type { Metrics } from "./metrics";
import { checkRequestValues, type RouteChecks, urlRefusal } from "./request-values";
import { type RouteShape, RouteTable } from "./route-table";
import { issuesOf } from "./validation-issues";

export { MAX_BODY_BYTES };

/** Seconds a client is asked to wait before retrying while the database is unreachable. */
export const UNAVAILABLE_RETRY_AFTER_SECONDS = 5;

export interface KernelOptions {
  /** The finished route table: for 405 with `Allow`, and to name the parameter a bad value was in. */
  routes?: () => readonly RouteShape[];
  /** Told when a request found the database unreachable, so /health need not wait for its next probe. */
  onDatabaseUnavailable?: () => void;
  /**
   * Called as each request starts, before anything of it runs: the embedded store's answers that arrived
   * meanwhile are settled then (Database.takeAnswers), so the requests waiting on them go on without
   * waiting for the event loop to come round.
   */
  onRequest?: () => void;
}

interface RequestState {
  id: string;
  startedAt: number;
  status?: number;
  /** Why the URL itself is refused (a NUL in it), answered with the request's other values. */
  refusedUrl: AppError | undefined;
  /** An authenticated route's value checks, left for its authenticating transform to run once the caller is in. */
  pendingChecks: RouteChecks | undefined;
}

/**
 * Each request's state rides on the Request object itself (a symbol-keyed property): a WeakMap entry per
 * request would be one more weak reference for every garbage collection to process.
 */
const STATE = Symbol("request-state");
type WithState = Request & { [STATE]?: RequestState };
const stateOf = (request: Request): RequestState | undefined => (request as WithState)[STATE];
const bootId = Math.floor(Math.random() * 36 ** 6)
  .toString(36)
  .padStart(6, "0");
let sequence = 0;
const INCOMING_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The id of the request being served: in logs, the X-Request-Id header and every error body. */
export function requestIdOf(request: Request): string {
  return stateOf(request)?.id ?? "unknown";
}

function startRequest(request: Request): RequestState {
  const incoming = request.headers.get("x-request-id");
  const id =
    incoming !== null && INCOMING_ID.test(incoming) ? incoming : `${bootId}-${(++sequence).toString(36)}`;
  const state: RequestState = {
    id,
    startedAt: performance.now(),
    refusedUrl: undefined,
    pendingChecks: undefined,
  };
  (request as WithState)[STATE] = state;
  return state;
}

export function errorResponse(error: AppError, requestId: string): Response {
  const body: Record<string, unknown> = { message: error.message, errorCode: error.code, requestId };
  if (error.detail !== undefined) body.detail = error.detail;
  return new Response(JSON.stringify(body), {
    status: error.status,
    headers: { "content-type": "application/json", "x-request-id": requestId, ...error.headers },
  });
}

/**
 * Called by a route's authenticating transform (the auth plugin's: authentication, scope, origin, the guards
 * and the route's own permission) once it has admitted the caller: an authenticated route's values are
 * checked then, so a caller it refuses learns nothing about them (src/http/request-values.ts).
 */
export function checkValuesAfterAdmission(
  request: Request,
  params: unknown,
  query: unknown,
  body: unknown,
): void {
  const state = stateOf(request);
  const checks = state?.pendingChecks;
  if (state === undefined || checks === undefined) return;
  state.pendingChecks = undefined;
  checkRequestValues(state.refusedUrl, checks, params, query, body);
}

const routeOf = (context: unknown): string => {
  const route = (context as { route?: unknown }).route;
  return typeof route === "string" && route !== "" ? route : "(no route)";
};

/** Maps any thrown value to an AppError; unknown errors become INTERNAL_ERROR and are logged by code only. */
function toAppError(
  code: string | number,
  error: unknown,
  context: { request: Request; route?: unknown },
  logger: Logger,
  requestId: string,
  options: KernelOptions,
  table: RouteTable | undefined,
): AppError {
  if (error instanceof AppError) return error;
  const { request } = context;
  switch (code) {
    case "VALIDATION":
      if ((error as ValidationError).type === "response") {
        // Our own output broke its schema: a bug on our side, never the caller's. The value stays out of the log.
        logger.error("response failed its schema", {
          requestId,
          route: routeOf(context),
          at: issuesOf(error as ValidationError).map((issue) => issue.loc.join(".")),
        });
        return new AppError("INTERNAL_ERROR", "Internal server error");
      }
      return new AppError("VALIDATION_ERROR", "Request validation failed", {
        detail: issuesOf(error as ValidationError),
      });
    case "NOT_FOUND": {
      const pathname = new URL(request.url).pathname;
      const allowed = table?.methodsAt(pathname) ?? [];
      if (allowed.length > 0 && !allowed.includes(request.method)) {
        return new AppError(
          "METHOD_NOT_ALLOWED",
          `${request.method} is not allowed here; use ${allowed.join(", ")}`,
          {
            headers: { allow: allowed.join(", ") },
          },
        );
      }
      return new AppError("NOT_FOUND", `No route for ${request.method} ${pathname}`);
    }
    case "PARSE": {
      // The body parser's 413 arrives wrapped by Elysia (its other refusals are answered after authentication).
      const cause = (error as { cause?: unknown }).cause;
      if (cause instanceof AppError) return cause;
      return new AppError("VALIDATION_ERROR", "The request body is not valid JSON", {
        detail: [{ loc: ["body"], msg: "Malformed JSON body", type: "value_error.jsondecode" }],
      });
    }
    case "INVALID_COOKIE_SIGNATURE":
      return new AppError("FORBIDDEN", "Invalid cookie signature");
  }
  const status = (error as { status?: unknown })?.status;
  if (status === 413) return new AppError("PAYLOAD_TOO_LARGE", "The request body exceeds 10 MB");
  switch (classifyDatabaseError(error)) {
    case "data":
      // A value the store cannot hold (a number or date out of its range): the caller's to fix.
      // Where the value was is not known here; the route's own checks name it whenever they can.
      return new AppError("VALIDATION_ERROR", "A value is outside what the service can store", {
        detail: [{ loc: ["request"], msg: "a value is out of range or malformed", type: "value_error.data" }],
      });
    case "unavailable":
      options.onDatabaseUnavailable?.();
      logger.error("database unavailable", {
        requestId,
        method: request.method,
        route: routeOf(context),
        code: databaseErrorCode(error),
      });
      return new AppError("SERVICE_UNAVAILABLE", "The service cannot reach its database; retry shortly", {
        headers: { "retry-after": String(UNAVAILABLE_RETRY_AFTER_SECONDS) },
      });
  }
  // The logger writes errors by name, code and stack: a database error's message holds the statement's values.
  logger.error("unhandled error", { requestId, method: request.method, route: routeOf(context), error });
  return new AppError("INTERNAL_ERROR", "Internal server error");
}

/**
 * Elysia settings every instance must share: bodies and queries are validated as sent (unknown fields are
 * a 422, not silently dropped), and responses must match their schema exactly.
 */
export const ELYSIA_CONFIG = { normalize: false } as const;

export function httpKernel(logger: Logger, metrics?: Metrics, options: KernelOptions = {}) {
  const table = options.routes === undefined ? undefined : new RouteTable(options.routes);
  return (
    new Elysia({ name: "http-kernel" })
      .onRequest(({ request, set }) => {
        options.onRequest?.();
        const state = startRequest(request);
        set.headers["x-request-id"] = state.id;
        if (request.headers.get("x-forwarded-proto") === "https") {
          set.headers["strict-transport-security"] = "max-age=31536000; includeSubDomains";
        }
        const length = request.headers.get("content-length");
        if (length !== null && Number(length) > MAX_BODY_BYTES) {
          throw new AppError("PAYLOAD_TOO_LARGE", "The request body exceeds 10 MB");
        }
        state.refusedUrl = urlRefusal(request.url);
      })
      // Every body is read here, capped and bounded, whatever its Content-Type (see ./body.ts).
      .onParse({ as: "global" }, ({ request, contentType }) => parseRequestBody(request, contentType))
      // Never reached (the parser above answers every body or throws); it stops Elysia from trying its own
      // parsers by Content-Type, and it is what the OpenAPI document reads: bodies are application/json.
      .onParse({ as: "global" }, { fn: "json" } as never)
      // Runs before any route's own transform, the auth plugin's included: an authenticated route's values
      // wait until the caller is admitted; a public route's are checked here.
      .onTransform({ as: "global" }, (context) => {
        if (context.body === EMPTY_BODY) context.body = undefined;
        const state = stateOf(context.request);
        const checks = table?.checksOf(context.request.method, context.route);
        if (state !== undefined && checks?.authenticated === true) {
          state.pendingChecks = checks;
          return;
        }
        checkRequestValues(state?.refusedUrl, checks, context.params, context.query, context.body);
      })
      // Destructured, never handed on whole: Elysia reads hooks' source, and a context passed to a function
      // makes it prepare everything (cookies included) for every route.
      .onError({ as: "global" }, ({ code, error, request, route, set }) => {
        const state = stateOf(request) ?? startRequest(request);
        const appError = toAppError(code, error, { request, route }, logger, state.id, options, table);
        state.status = appError.status;
        // Headers set for the request so far (the per-minute X-RateLimit-*) must not contradict the error's own
        // (a daily training cap's): Elysia merges them into the answer.
        for (const [name, value] of Object.entries(appError.headers ?? {}))
          set.headers[name.toLowerCase()] = value;
        const response = errorResponse(appError, state.id);
        const hsts = set.headers["strict-transport-security"];
        if (typeof hsts === "string") response.headers.set("strict-transport-security", hsts);
        return response;
      })
      .onAfterResponse({ as: "global" }, ({ request, route, set }) => {
        const state = stateOf(request);
        if (state === undefined) return;
        const status = state.status ?? (typeof set.status === "number" ? set.status : 200);
        const ms = performance.now() - state.startedAt;
        metrics?.observeRequest(request.method, route, status, ms / 1000);
        // The route's pattern, never the concrete path: paths carry external ids, which may be personal.
        logger.info("request", {
          method: request.method,
          route: route || "(no route)",
          status,
          ms: Math.round(ms * 100) / 100,
          requestId: state.id,
        });
      })
  );
}

export { ERROR_STATUS };
