import { Elysia } from "elysia";
import type { AppDeps } from "../../app-deps";
import type { ServiceModule } from "../module";
import { HealthResponse } from "./schemas";

function healthRoutes(deps: AppDeps) {
  const startedAt = Date.now();
  return new Elysia({ name: "health" }).get(
    "/health",
    ({ set }) => {
      const database = deps.health.current();
      // A load balancer or monitor reads the status code, not the body.
      if (database.state === "down") set.status = 503;
      return {
        status: database.state === "down" ? ("degraded" as const) : ("ok" as const),
        version: deps.config.version,
        uptimeSeconds: Math.round((Date.now() - startedAt) / 1000),
        database,
      };
    },
    {
      response: { 200: HealthResponse, 503: HealthResponse },
      detail: {
        tags: ["Health"],
        summary: "Service health (no authentication)",
        description: "503 with `status: degraded` while the database is unreachable.",
      },
    },
  );
}

export const healthModule: ServiceModule = {
  name: "health",
  routes: healthRoutes,
};
