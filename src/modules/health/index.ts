import { Elysia } from "elysia";
import type { AppDeps } from "../../deps";
import { HealthResponse } from "./schemas";

export function healthModule(deps: AppDeps) {
  const startedAt = Date.now();
  return new Elysia({ name: "health" }).get(
    "/health",
    () => {
      const database = deps.health.snapshot();
      return {
        status: database.state === "down" ? ("degraded" as const) : ("ok" as const),
        version: deps.config.version,
        uptimeSeconds: Math.round((Date.now() - startedAt) / 1000),
        database,
      };
    },
    { response: HealthResponse, detail: { tags: ["Health"], summary: "Service health (no authentication)" } },
  );
}
