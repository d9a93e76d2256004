/**
 * The HTTP kernel every route runs inside: request ids, the request log line, HSTS, the body-size limit and
 * the one mapping from errors to `{message, errorCode, requestId}` responses.
 */
import { Elysia, type ValidationError } from "elysia";
import { AppError, ERROR_STATUS, type ValidationIssue } from "../shared/errors";
import type { Logger } from "../shared/logger";
import type { Metrics } from "./metrics";

export const MAX_BODY_BYTES = 10 * 1024 * 1024;

interface RequestState {
  id: string;
  startedAt: number;
  status?: number;
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
  const state: RequestState = { id, startedAt: performance.now() };
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

function validationIssues(error: ValidationError): ValidationIssue[] {
  const where = error.type === "params" ? "path" : error.type;
  const issues = error.all.map((e) => {
    const path = "path" in e && typeof e.path === "string" ? e.path : "";
    const loc = [where, ...path.split("/").filter((p) => p !== "")];
    const msg =
      ("summary" in e && typeof e.summary === "string" && e.summary) || e.message || "Invalid value";
    return { loc, msg, type: `value_error.${"type" in e ? String(e.type) : "invalid"}` };
  });
  return issues.length > 0 ? issues : [{ loc: [where], msg: "Invalid value", type: "value_error" }];
}

/** Maps any thrown value to an AppError; unknown errors become INTERNAL_ERROR and are logged with their stack. */
function toAppError(
  code: string | number,
  error: unknown,
  logger: Logger,
  request: Request,
  requestId: string,
): AppError {
  if (error instanceof AppError) return error;
  switch (code) {
    case "VALIDATION":
      if ((error as ValidationError).type === "response") {
        // Our own output broke its schema: a bug on our side, never the caller's.
        logger.error("response failed its schema", { requestId, url: request.url, error });
        return new AppError("INTERNAL_ERROR", "Internal server error");
      }
      return new AppError("VALIDATION_ERROR", "Request validation failed", {
        detail: validationIssues(error as ValidationError),
      });
    case "NOT_FOUND":
      return new AppError("NOT_FOUND", `No route for ${request.method} ${new URL(request.url).pathname}`);
    case "PARSE":
      return new AppError("VALIDATION_ERROR", "The request body is not valid JSON", {
        detail: [{ loc: ["body"], msg: "Malformed JSON body", type: "value_error.jsondecode" }],
      });
    case "INVALID_COOKIE_SIGNATURE":
      return new AppError("FORBIDDEN", "Invalid cookie signature");
  }
  const status = (error as { status?: unknown })?.status;
  if (status === 413) return new AppError("PAYLOAD_TOO_LARGE", "The request body exceeds 10 MB");
  logger.error("unhandled error", { requestId, method: request.method, url: request.url, error });
  return new AppError("INTERNAL_ERROR", "Internal server error");
}

/**
 * Elysia settings every instance must share: bodies and queries are validated as sent (unknown fields are
 * a 422, not silently dropped), and responses must match their schema exactly.
 */
export const ELYSIA_CONFIG = { normalize: false } as const;

export function httpKernel(logger: Logger, metrics?: Metrics) {
  return new Elysia({ name: "http-kernel" })
    .onRequest(({ request, set }) => {
      const state = startRequest(request);
      set.headers["x-request-id"] = state.id;
      if (request.headers.get("x-forwarded-proto") === "https") {
        set.headers["strict-transport-security"] = "max-age=31536000; includeSubDomains";
      }
      const length = request.headers.get("content-length");
      if (length !== null && Number(length) > MAX_BODY_BYTES) {
        throw new AppError("PAYLOAD_TOO_LARGE", "The request body exceeds 10 MB");
      }
    })
    .onError({ as: "global" }, ({ code, error, request, set }) => {
      const state = stateOf(request) ?? startRequest(request);
      const appError = toAppError(code, error, logger, request, state.id);
      state.status = appError.status;
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
      logger.info("request", {
        method: request.method,
        route: route || new URL(request.url).pathname,
        status,
        ms: Math.round(ms * 100) / 100,
        requestId: state.id,
      });
    });
}

export { ERROR_STATUS };
