import { Elysia } from "elysia";
import type { AppDeps } from "../../app-deps";
import { authPlugin } from "../../http/auth";
import { ELYSIA_CONFIG } from "../../http/kernel";
import type { ServiceModule } from "../module";
import { getRecommendationMetrics } from "./get-recommendation-metrics";
import { MetricsQuery, MetricsReport } from "./schemas";

const tags = ["Analytics"];

function analyticsRoutes(deps: AppDeps) {
  return new Elysia({ ...ELYSIA_CONFIG, name: "analytics", prefix: "/api/v1/analytics" })
    .use(authPlugin(deps))
    .get(
      "/recommendations",
      ({ tenant, query }) => getRecommendationMetrics({ ctx: tenant, deps, input: query }),
      {
        auth: { mode: "keyOrJwt" },
        query: MetricsQuery,
        response: { 200: MetricsReport },
        detail: {
          tags,
          summary: "Online metrics of the recommendation answers",
          description:
            "Per group (`group_by`: endpoint, strategy, variant or day) between two UTC days (at most 366; " +
            "default the last 30): impressions (products shown), click-through, add-to-cart and conversion " +
            "rates per impression (Wilson 95% intervals) and credited revenue per 1,000 impressions (normal 95% " +
            "interval). Clicks, carts and purchases count when credited to an answer (see `recommendation_id` " +
            "on interactions), on the day the answer was shown. Read from daily aggregates kept up to date as " +
            "answers and interactions are written (within about a second); an erased end user's contributions " +
            "are taken out. Secret API key or user JWT; publishable keys answer 403.",
        },
      },
    );
}

export const analyticsModule: ServiceModule = {
  name: "analytics",
  routes: analyticsRoutes,
};
