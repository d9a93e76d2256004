import type { ErrorCode as ServiceErrorCode } from "./generated/openapi";

/**
 * The service's error codes, and `UNEXPECTED_RESPONSE` for an error answer that is not the service's JSON
 * (a proxy's or load balancer's page) and whose status names none of them.
 */
export type ErrorCode = ServiceErrorCode | "UNEXPECTED_RESPONSE";

/** The code of an error answer without the service's JSON body, from its status. */
export function errorCodeForStatus(status: number): ErrorCode {
  switch (status) {
    case 404:
      return "NOT_FOUND";
    case 405:
      return "METHOD_NOT_ALLOWED";
    case 413:
      return "PAYLOAD_TOO_LARGE";
    case 415:
      return "UNSUPPORTED_MEDIA_TYPE";
    case 429:
      return "RATE_LIMITED";
    case 503:
      return "SERVICE_UNAVAILABLE";
  }
  return status >= 500 ? "INTERNAL_ERROR" : "UNEXPECTED_RESPONSE";
}

/** One entry per invalid field of a 422 answer. */
export interface ValidationIssue {
  loc: (string | number)[];
  msg: string;
  type: string;
}

/** An error answer of the service: its status and `{message, errorCode, requestId}` body. */
export class RecsApiError extends Error {
  override readonly name = "RecsApiError";
  constructor(
    readonly status: number,
    message: string,
    readonly errorCode: ErrorCode,
    /** Quote it to support: it names the request in the service's logs. */
    readonly requestId: string,
    readonly detail: ValidationIssue[] | undefined,
    /** Seconds the service asked to wait (429, 503), when it said. */
    readonly retryAfter: number | undefined,
  ) {
    super(message);
  }
}

/**
 * The service could not be reached, or (in a browser) the browser refused to show its answer: a CORS
 * refusal looks exactly like a network failure to a script, so the message names both.
 */
export class RecsNetworkError extends Error {
  override readonly name = "RecsNetworkError";
  constructor(
    readonly url: string,
    override readonly cause: unknown,
  ) {
    super(
      typeof document === "undefined"
        ? `Could not reach ${url}: ${cause instanceof Error ? cause.message : String(cause)}`
        : `Could not reach ${url}, or the browser blocked the answer under CORS. From a browser, call only ` +
            "the recommendation routes and POST /api/v1/interactions/ with a publishable key (pk_…) whose " +
            "allowedDomains include this page's origin; secret keys and the other routes are for servers " +
            "(or for origins listed in the service's CORS_ORIGINS).",
    );
  }
}
