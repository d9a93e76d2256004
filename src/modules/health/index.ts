import { Elysia } from "elysia";
import type { AppDeps } from "../../app-deps";
import { requestIdOf, UNAVAILABLE_RETRY_AFTER_SECONDS } from "../../http/kernel";
import type { ServiceModule } from "../module";
import { HealthDegradedResponse, HealthResponse } from "./schemas";

function healthRoutes(deps: AppDeps) {
  const startedAt = Date.now();
  return new Elysia({ name: "health" }).get(
    "/health",
    ({ set, request }) => {
      const database = deps.health.current();
      const health = {
        status: "ok" as "ok" | "degraded",
        version: deps.config.version,
        uptimeSeconds: Math.round((Date.now() - startedAt) / 1000),
        database,
      };
      if (database.state !== "down") return health;
      // A load balancer or monitor reads the status code; a client, the error body every 503 carries.
      set.status = 503;
      set.headers["retry-after"] = String(UNAVAILABLE_RETRY_AFTER_SECONDS);
      return {
        ...health,
        status: "degraded" as const,
        message: "The database is unreachable; try again shortly",
        errorCode: "SERVICE_UNAVAILABLE" as const,
        requestId: requestIdOf(request),
      };
    },
    {
      response: { 200: HealthResponse, 503: HealthDegradedResponse },
      detail: {
        tags: ["Health"],
        summary: "Service health (no authentication)",
        description:
          "503 with `status: degraded`, Retry-After and the error fields (`message`, `errorCode` " +
          "SERVICE_UNAVAILABLE, `requestId`) while the database is unreachable.",
      },
    },
  );
}

export const healthModule: ServiceModule = {
  name: "health",
  routes: healthRoutes,
};
