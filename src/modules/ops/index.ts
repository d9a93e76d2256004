/**
 * Operational routes for monitoring systems, not for API clients: Prometheus metrics and readiness.
 * Both are in the OpenAPI document under the "Operations" tag so operators can find them.
 */
import { Elysia } from "elysia";
import type { AppDeps } from "../../app-deps";
import { checkValuesAfterAdmission, ELYSIA_CONFIG } from "../../http/kernel";
import { markAuthenticatingHook } from "../../http/request-values";
import type { ServiceModule } from "../module";
import { authorizeMetrics } from "./authorize-metrics";
import { MetricsResponses, ReadyResponses } from "./schemas";
import { scrapeMetrics } from "./scrape-metrics";

const PROMETHEUS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

/** What the scrape's authorisation reads of Elysia's context. */
interface ScrapeContext {
  request: Request;
  server: { requestIP(request: Request): { address: string } | null } | null;
  params: unknown;
  query: unknown;
  body: unknown;
}

function opsRoutes(deps: AppDeps) {
  return new Elysia({ ...ELYSIA_CONFIG, name: "ops" })
    .get(
      "/metrics",
      async ({ set }) => {
        set.headers["content-type"] = PROMETHEUS_CONTENT_TYPE;
        set.headers["cache-control"] = "no-store";
        return scrapeMetrics({ deps });
      },
      {
        // The scraper is authorised before anything it sent is looked at, as on every authenticated route.
        transform: markAuthenticatingHook(({ request, server, params, query, body }: ScrapeContext) => {
          authorizeMetrics({
            token: deps.config.metricsToken,
            caller: {
              authorization: request.headers.get("authorization"),
              peerAddress: server?.requestIP(request)?.address ?? null,
              forwarded: request.headers.has("x-forwarded-for") || request.headers.has("forwarded"),
            },
          });
          checkValuesAfterAdmission(request, params, query, body);
        }),
        response: MetricsResponses,
        detail: {
          tags: ["Operations"],
          summary: "Prometheus metrics (operational, not part of the client API)",
          description:
            "Request counts and latency histograms per route and status class, job queue depth, training " +
            "durations, snapshot memory, cache hits and process memory, in the Prometheus text format. " +
            "With METRICS_TOKEN set it needs `Authorization: Bearer <METRICS_TOKEN>` (401 INVALID_TOKEN " +
            "otherwise); without it, it answers only clients on the same machine that did not come through " +
            "a proxy (403 FORBIDDEN otherwise).",
        },
      },
    )
    .get(
      "/ready",
      ({ set }) => {
        const { ready, checks } = deps.readiness.evaluate();
        set.status = ready ? 200 : 503;
        set.headers["cache-control"] = "no-store";
        return { status: ready ? ("ready" as const) : ("not_ready" as const), checks };
      },
      {
        response: ReadyResponses,
        detail: {
          tags: ["Operations"],
          summary: "Readiness for load balancers (operational, no authentication)",
          description:
            "Answered from memory. 200 when this process should receive traffic; 503 with the same body " +
            "(status `not_ready`) when the database did not answer its background probe, the process is " +
            "shutting down, or a registered component (tenant snapshots) is not ready. The 503 body is " +
            "this readiness report, not the error shape. Use GET /health for liveness.",
        },
      },
    );
}

export const opsModule: ServiceModule = {
  name: "ops",
  routes: opsRoutes,
};
