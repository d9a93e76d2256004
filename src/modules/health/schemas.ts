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
