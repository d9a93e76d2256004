/**
 * The error answers of every operation, as the OpenAPI description states them: one table of the codes a
 * route answers because of what it does (ROUTE_ERRORS), plus the codes every route answers because of how it
 * is called (authentication, limits, input, body size, the database), derived from the route's own hooks.
 * Each documented status lists its codes in the error body's `errorCode` enum, so a client (and
 * test/foundation/openapi-conformance.test.ts) can check an answer against the document.
 */
import { OptionalKind } from "@sinclair/typebox";
import { ACCOUNT_MANAGEMENT } from "../modules/plans/enforcer";
import { ERROR_STATUS, type ErrorCode } from "../shared/errors";
import type { AuthMode } from "./tenant";

/** Codes of the contract answered outside the domain error table (by the HTTP layer itself). */
const HTTP_LAYER_STATUS = {} as const;

export type DocumentedCode = ErrorCode | keyof typeof HTTP_LAYER_STATUS;

const statusOf = (code: DocumentedCode): number =>
  code in HTTP_LAYER_STATUS
    ? HTTP_LAYER_STATUS[code as keyof typeof HTTP_LAYER_STATUS]
    : ERROR_STATUS[code as ErrorCode];

/**
 * What a route answers because of what it does, keyed `METHOD path` with the route's own path (`:param`).
 * Generic answers (401/403/429 on authenticated routes, 422 on routes with input, 413 on routes with a body,
 * 500/503 everywhere) are added to these; list a generic code here only when the route has a reason of its
 * own to answer it (login's 429, the webhook's 401).
 */
export const ROUTE_ERRORS: Readonly<Record<string, readonly DocumentedCode[]>> = {
  "GET /metrics": ["INVALID_TOKEN", "FORBIDDEN"],

  "POST /api/v1/products/": ["CONFLICT"],
  "GET /api/v1/products/external/:external_id": ["NOT_FOUND"],
  "PUT /api/v1/products/external/:external_id": ["NOT_FOUND"],
  "PATCH /api/v1/products/external/:external_id": ["NOT_FOUND"],
  "DELETE /api/v1/products/external/:external_id": ["NOT_FOUND"],

  "POST /api/v1/end-users/": ["CONFLICT"],
  "GET /api/v1/end-users/external/:external_user_id": ["NOT_FOUND"],
  "PATCH /api/v1/end-users/external/:external_user_id": ["NOT_FOUND"],
  "DELETE /api/v1/end-users/external/:external_user_id": ["NOT_FOUND"],
  "GET /api/v1/end-users/external/:external_user_id/export": ["NOT_FOUND"],

  "POST /api/v1/interactions/": ["NOT_FOUND"],

  "GET /api/v1/ingestion/batch/:job_id": ["NOT_FOUND"],

  "POST /api/v1/pipeline/train": ["TRAINING_TOO_FREQUENT"],
  "GET /api/v1/pipeline/status": ["NO_MODEL"],
  "GET /api/v1/pipeline/jobs/:job_id/status": ["NOT_FOUND"],

  "POST /api/v1/auth/register": ["CONFLICT", "RATE_LIMITED"],
  "POST /api/v1/auth/token": ["INVALID_CREDENTIALS", "FORBIDDEN", "RATE_LIMITED"],
  "GET /api/v1/auth/verify-email": ["NOT_FOUND"],

  "GET /api/v1/api-keys/current": ["NOT_FOUND"],
  "PUT /api/v1/api-keys/:api_key_id": ["NOT_FOUND"],
  "DELETE /api/v1/api-keys/:api_key_id": ["NOT_FOUND"],

  "PUT /api/v1/system-users/me": ["INVALID_CREDENTIALS", "CONFLICT"],
  "PUT /api/v1/accounts/current": ["ADMIN_REQUIRED"],
  "PATCH /api/v1/accounts/current": ["ADMIN_REQUIRED"],

  "POST /api/v1/billing/create-checkout-session": ["CONFLICT", "BILLING_NOT_CONFIGURED"],
  "POST /api/v1/billing/create-subscription-session": ["CONFLICT", "BILLING_NOT_CONFIGURED"],
  "POST /api/v1/billing/create-portal-session": ["BILLING_NOT_CONFIGURED"],
  "POST /api/v1/billing/webhook/:provider": ["INVALID_SIGNATURE", "NOT_FOUND", "CONFLICT"],
  "GET /api/v1/billing/local/checkout/:token": ["NOT_FOUND"],
  "POST /api/v1/billing/local/checkout/:token/confirm": ["NOT_FOUND"],
  "GET /api/v1/billing/local/portal/:token": ["NOT_FOUND"],
  "POST /api/v1/billing/local/portal/:token/cancel": ["NOT_FOUND"],

  "POST /api/v1/sandbox/reset": ["FREE_PLAN_ONLY"],
  "POST /api/v1/sandbox/quick-start": ["CONFLICT"],

  "GET /api/v1/recommendations/products/external/:external_product_id/similar": ["NOT_FOUND"],

  "POST /api/v1/experiments/": ["CONFLICT"],
  "GET /api/v1/experiments/:experiment_id": ["NOT_FOUND"],
  "POST /api/v1/experiments/:experiment_id/stop": ["NOT_FOUND"],
  "GET /api/v1/experiments/:experiment_id/results": ["NOT_FOUND"],
  "POST /api/v1/recommendations/ecommerce/product-page": ["NOT_FOUND"],
};

/**
 * What each code means, shown in the description of the status that carries it (partial, so a code added to
 * the error table reads as its bare name until it gets a sentence here).
 */
const MEANING: Partial<Record<DocumentedCode, string>> = {
  INVALID_API_KEY: "no API key (or token) was sent, or the key is unknown or revoked",
  INVALID_TOKEN: "the bearer token is missing, malformed or expired",
  TOKEN_REVOKED: "the bearer token was revoked (logout, password change, user deleted)",
  INVALID_CREDENTIALS: "the e-mail or password is wrong",
  INVALID_SIGNATURE: "the signature is missing, wrong or older than 5 minutes",
  FORBIDDEN: "the account is deactivated, or the key and the token belong to different accounts",
  ADMIN_REQUIRED: "only platform administrators may change these fields",
  INSUFFICIENT_SCOPE: "the publishable key lacks the scope this route needs",
  ORIGIN_NOT_ALLOWED: "the publishable key may not be used from this Origin",
  EMAIL_NOT_VERIFIED: "the grace period for verifying the e-mail address is over",
  SUBSCRIPTION_INACTIVE: "the paid subscription is not active",
  FREE_PLAN_ONLY: "only FREE-plan accounts may do this",
  NOT_FOUND: "no such record in this account",
  NO_MODEL: "no training has completed yet",
  CONFLICT: "the record already exists or the request contradicts the current state",
  PAYLOAD_TOO_LARGE: "the body is over 10 MB",
  VALIDATION_ERROR: "a field is missing or invalid; `detail` names each one",
  RATE_LIMITED: "too many requests in the window; see Retry-After",
  PLAN_LIMIT_EXCEEDED: "the plan's monthly requests or record count would be exceeded",
  TRAINING_TOO_FREQUENT: "the plan's trainings for today are used up; see Retry-After",
  INTERNAL_ERROR: "an unexpected error; quote the requestId to support",
  SERVICE_UNAVAILABLE: "the database cannot be reached; retry after Retry-After",
  METHOD_NOT_ALLOWED: "the path has no such method; the Allow header lists those it has",
  UNSUPPORTED_MEDIA_TYPE: "the body is a form or multipart body; send JSON",
  BILLING_NOT_CONFIGURED: "no payment provider is configured on this service (PAYMENT_PROVIDER)",
};

export interface RouteShape {
  method: string;
  path: string;
  hooks: Record<string, unknown>;
}

const UNAUTHENTICATED: Record<AuthMode, DocumentedCode[]> = {
  keyOrJwt: ["INVALID_API_KEY", "INVALID_TOKEN", "TOKEN_REVOKED"],
  jwt: ["INVALID_TOKEN", "TOKEN_REVOKED"],
  key: ["INVALID_API_KEY"],
  keyAndJwt: ["INVALID_API_KEY", "INVALID_TOKEN", "TOKEN_REVOKED"],
};

interface RouteDetail {
  security?: Record<string, string[]>[];
  "x-publishable-scope"?: string;
}

/** The auth macro states a route's authentication in its `detail` (src/http/auth.ts); read it back. */
function authOf(detail: RouteDetail | undefined): { mode: AuthMode; publishable: boolean } | undefined {
  const security = detail?.security;
  if (security === undefined || security.length === 0) return undefined;
  const schemes = security.map((requirement) => Object.keys(requirement).sort().join("+"));
  const mode: AuthMode =
    schemes.length === 2
      ? "keyOrJwt"
      : schemes[0] === "ApiKey+BearerJWT"
        ? "keyAndJwt"
        : schemes[0] === "ApiKey"
          ? "key"
          : "jwt";
  return { mode, publishable: detail?.["x-publishable-scope"] !== undefined };
}

const isOptionalSchema = (schema: unknown): boolean =>
  typeof schema === "object" &&
  schema !== null &&
  (schema as Record<symbol, unknown>)[OptionalKind] === "Optional";

/** Every error code the route can answer, in table order then generic order, without repeats. */
export function documentedErrorCodes(route: RouteShape): DocumentedCode[] {
  const { hooks } = route;
  const codes: DocumentedCode[] = [...(ROUTE_ERRORS[routeKey(route)] ?? [])];
  const auth = authOf(hooks.detail as RouteDetail | undefined);
  if (auth !== undefined) {
    codes.push(...UNAUTHENTICATED[auth.mode], "FORBIDDEN");
    if (!ACCOUNT_MANAGEMENT.test(route.path)) codes.push("SUBSCRIPTION_INACTIVE");
    if (auth.mode !== "jwt") codes.push("EMAIL_NOT_VERIFIED", "INSUFFICIENT_SCOPE");
    if (auth.publishable) codes.push("ORIGIN_NOT_ALLOWED");
    codes.push("RATE_LIMITED", "PLAN_LIMIT_EXCEEDED");
  }
  const hasBody = hooks.body !== undefined;
  if (hasBody || hooks.query !== undefined || hooks.params !== undefined) codes.push("VALIDATION_ERROR");
  if (hasBody) codes.push("PAYLOAD_TOO_LARGE", "UNSUPPORTED_MEDIA_TYPE");
  codes.push("INTERNAL_ERROR", "SERVICE_UNAVAILABLE");
  return [...new Set(codes)];
}

export const routeKey = (route: { method: string; path: string }): string =>
  `${route.method.toUpperCase()} ${route.path}`;

/** True when the route's body may be left out (declared `t.Optional(...)`). */
export const bodyIsOptional = (route: RouteShape): boolean => isOptionalSchema(route.hooks.body);

const errorBody = (codes: readonly DocumentedCode[]) => ({
  type: "object",
  required: ["message", "errorCode", "requestId"],
  properties: {
    message: { type: "string", description: "What went wrong, in words" },
    errorCode: { type: "string", enum: [...codes], description: "Stable code for programs" },
    requestId: { type: "string", description: "The X-Request-Id of the request, to give to support" },
  },
});

const validationBody = () => {
  const body = errorBody(["VALIDATION_ERROR"]);
  return {
    ...body,
    required: [...body.required, "detail"],
    properties: {
      ...body.properties,
      detail: {
        type: "array",
        description: "One entry per invalid field",
        items: {
          type: "object",
          required: ["loc", "msg", "type"],
          properties: {
            loc: {
              type: "array",
              items: { anyOf: [{ type: "string" }, { type: "integer" }] },
              description:
                'Where the value was and its name, e.g. ["query", "limit"], ["body", "filters", "filters", 0, "op"]',
            },
            msg: { type: "string" },
            type: { type: "string" },
          },
        },
      },
    },
  };
};

const RETRY_AFTER = { description: "Seconds to wait before retrying", schema: { type: "integer" } };

/**
 * The OpenAPI response objects of the route's error statuses, keyed by status. Statuses the route already
 * declares as answers of its own (a 503 readiness body) are left to the route.
 */
export function errorResponses(route: RouteShape): Record<string, Record<string, unknown>> {
  const byStatus = new Map<number, DocumentedCode[]>();
  for (const code of documentedErrorCodes(route)) {
    const status = statusOf(code);
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const responses: Record<string, Record<string, unknown>> = {};
  for (const [status, codes] of [...byStatus].sort(([a], [b]) => a - b)) {
    const description = codes
      .map((code) => (MEANING[code] === undefined ? code : `${code}: ${MEANING[code]}`))
      .join("; ");
    const schema = status === 422 ? validationBody() : errorBody(codes);
    responses[String(status)] = {
      description,
      ...(status === 429 || status === 503 ? { headers: { "Retry-After": RETRY_AFTER } } : {}),
      content: { "application/json": { schema } },
    };
  }
  return responses;
}
