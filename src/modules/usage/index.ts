import { Elysia } from "elysia";
import type { AppDeps } from "../../app-deps";
import { authPlugin } from "../../http/auth";
import { ELYSIA_CONFIG } from "../../http/kernel";
import type { ServiceModule } from "../module";
import { getUsageStatistics } from "./get-statistics";
import { listUsagePoints } from "./list-points";
import { UsagePoints, UsageQuery, UsageStatistics, UsageSummary } from "./schemas";
import { summarizeUsage } from "./summarize";

export { recordUsage } from "./record";

/** Usage reports. Requests are metered by the plan guard; other modules count work with recordUsage. */
function usageRoutes(deps: AppDeps) {
  return new Elysia({ ...ELYSIA_CONFIG, name: "usage", prefix: "/api/v1" })
    .use(authPlugin(deps))
    .get("/accounts/usage", ({ tenant }) => getUsageStatistics({ ctx: tenant, deps }), {
      auth: { mode: "keyOrJwt" },
      response: { 200: UsageStatistics },
      detail: {
        tags: ["Usage"],
        summary: "Usage statistics of the current month",
        description:
          "Requests, recommendations served, records ingested and trainings this calendar month (UTC), the " +
          "limits in force and what remains of them. While a paid subscription is lapsed, FREE limits apply.",
      },
    })
    .get("/usage/summary", ({ tenant }) => summarizeUsage({ ctx: tenant, deps }), {
      auth: { mode: "jwt" },
      response: { 200: UsageSummary },
      detail: {
        tags: ["Usage"],
        summary: "Consolidated usage summary (dashboard, JWT only)",
        description: "This month, today, the limits in force, catalogue size and remaining allowances.",
      },
    })
    .get("/usage/", ({ tenant, query }) => listUsagePoints({ ctx: tenant, deps, input: query }), {
      auth: { mode: "keyOrJwt" },
      query: UsageQuery,
      response: { 200: UsagePoints },
      detail: {
        tags: ["Usage"],
        summary: "Daily usage points",
        description:
          "One point per UTC day from start_date to end_date (inclusive, at most 366 days; default the last " +
          "30 days), days without usage included as zeros.",
      },
    });
}

export const usageModule: ServiceModule = {
  name: "usage",
  routes: usageRoutes,
};
