/**
 * The error responses of every operation, added to the OpenAPI description from each route's own hooks:
 * authenticated routes can answer 401/403/429, routes with a body, query or path parameters 422, routes with
 * path parameters 404, and every route 500. All share the one error body the kernel writes.
 */
import type { AdditionalReferences } from "@elysiajs/openapi/types";
import type { TObject } from "@sinclair/typebox";
import { t } from "elysia";

const ErrorBody = t.Object(
  {
    message: t.String({ description: "Human-readable description" }),
    errorCode: t.String({ description: "Stable code for programs, e.g. INVALID_API_KEY, NOT_FOUND" }),
    requestId: t.String({ description: "The X-Request-Id of the request, to give to support" }),
  },
  { description: "Error" },
);

const ValidationErrorBody = t.Object(
  {
    message: t.String(),
    errorCode: t.Literal("VALIDATION_ERROR"),
    requestId: t.String(),
    detail: t.Array(
      t.Object({
        loc: t.Array(t.Union([t.String(), t.Integer()]), {
          description: 'Where the value was and its name, e.g. ["body", "filters", "filters", 0, "op"]',
        }),
        msg: t.String(),
        type: t.String(),
      }),
      {
        description: "One entry per invalid field",
      },
    ),
  },
  { description: "Validation error (unknown fields are rejected too)" },
);

const described = (description: string, schema: TObject = ErrorBody) =>
  t.Composite([schema], { description });

export interface RouteShape {
  method: string;
  path: string;
  hooks: Record<string, unknown>;
}

type References = Record<string, Record<string, { response: Record<number, unknown> }>>;

/**
 * As the plugin's `references` option. Its type asks for every schema of an operation, but the plugin merges
 * only the ones given; here only error responses are.
 */
export function errorReferences(routes: () => readonly RouteShape[]): AdditionalReferences {
  let cached: References | undefined;
  const build = () => {
    if (cached !== undefined) return cached;
    const references: References = {};
    for (const route of routes()) {
      const { hooks } = route;
      const response: Record<number, unknown> = {
        500: described("Internal error; the body carries the requestId"),
      };
      // The auth macro declares the route's security requirement; that is what marks it authenticated.
      const security = (hooks.detail as { security?: unknown[] } | undefined)?.security;
      if (security !== undefined && security.length > 0) {
        response[401] = described(
          "Missing or invalid API key or token (INVALID_API_KEY, INVALID_TOKEN, TOKEN_REVOKED)",
        );
        response[403] = described(
          "Not allowed: scope, origin, admin-only field, inactive account or subscription, unverified e-mail",
        );
        response[429] = described(
          "Rate or plan limit exceeded (RATE_LIMITED, PLAN_LIMIT_EXCEEDED); see Retry-After",
        );
      }
      if (hooks.body !== undefined || hooks.query !== undefined || hooks.params !== undefined) {
        response[422] = described("Validation error", ValidationErrorBody);
      }
      if (hooks.params !== undefined)
        response[404] = described("Not found, or owned by another account (NOT_FOUND)");
      // Keyed by the route's own path (":param"), as the plugin looks references up.
      const byMethod = references[route.path] ?? {};
      byMethod[route.method.toLowerCase()] = { response };
      references[route.path] = byMethod;
    }
    // The plugin may ask before any route is registered; only a finished table is worth keeping.
    if (Object.keys(references).length > 0) cached = references;
    return references;
  };
  return build as unknown as AdditionalReferences;
}
