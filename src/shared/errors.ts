/**
 * Domain errors: the closed set of error codes a client can program against, each with its HTTP status.
 * Use cases throw `AppError`; one HTTP plugin (src/http/kernel.ts) turns it into `{message, errorCode, requestId}`.
 */
export const ERROR_STATUS = {
  INVALID_API_KEY: 401,
  INVALID_TOKEN: 401,
  TOKEN_REVOKED: 401,
  INVALID_CREDENTIALS: 401,
  INVALID_SIGNATURE: 401,
  FORBIDDEN: 403,
  ADMIN_REQUIRED: 403,
  INSUFFICIENT_SCOPE: 403,
  ORIGIN_NOT_ALLOWED: 403,
  EMAIL_NOT_VERIFIED: 403,
  SUBSCRIPTION_INACTIVE: 403,
  FREE_PLAN_ONLY: 403,
  NOT_FOUND: 404,
  NO_MODEL: 404,
  CONFLICT: 409,
  METHOD_NOT_ALLOWED: 405,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  VALIDATION_ERROR: 422,
  RATE_LIMITED: 429,
  PLAN_LIMIT_EXCEEDED: 429,
  TRAINING_TOO_FREQUENT: 429,
  INTERNAL_ERROR: 500,
  SERVICE_UNAVAILABLE: 503,
  BILLING_NOT_CONFIGURED: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

/** One entry per invalid field, as in the 422 body's `detail` array. */
export interface ValidationIssue {
  /** Where the value was and its name: ["query", "limit"], ["body", "filters", "filters", 0, "op"]. */
  loc: (string | number)[];
  msg: string;
  type: string;
}

export interface AppErrorOptions {
  detail?: ValidationIssue[];
  /** Extra response headers, e.g. Retry-After for 429s. */
  headers?: Record<string, string>;
  cause?: unknown;
}

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly detail: ValidationIssue[] | undefined;
  readonly headers: Record<string, string> | undefined;

  constructor(code: ErrorCode, message: string, options: AppErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "AppError";
    this.code = code;
    this.status = ERROR_STATUS[code];
    this.detail = options.detail;
    this.headers = options.headers;
  }
}

export const notFound = (what: string): AppError => new AppError("NOT_FOUND", `${what} not found`);

export const validationError = (issues: ValidationIssue[], message = "Request validation failed"): AppError =>
  new AppError("VALIDATION_ERROR", message, { detail: issues });
