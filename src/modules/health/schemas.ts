import { t } from "elysia";

export const HealthResponse = t.Object(
  {
    status: t.Union([t.Literal("ok"), t.Literal("degraded")]),
    version: t.String(),
    uptimeSeconds: t.Number(),
    database: t.Object({
      state: t.Union([t.Literal("up"), t.Literal("down"), t.Literal("unknown")]),
      kind: t.Union([t.Literal("pglite"), t.Literal("postgres")]),
      checkedAt: t.Union([t.String({ format: "date-time" }), t.Null()]),
      latencyMs: t.Union([t.Number(), t.Null()]),
    }),
  },
  {
    description: "Service liveness, answered from memory; the database state comes from a background probe.",
  },
);

/** While the database is down: the health fields, and the error body every 503 carries. */
export const HealthDegradedResponse = t.Composite(
  [
    HealthResponse,
    t.Object({
      message: t.String(),
      errorCode: t.Literal("SERVICE_UNAVAILABLE"),
      requestId: t.String(),
    }),
  ],
  { description: "503 while the database is unreachable, with Retry-After." },
);
