import { Elysia } from "elysia";
import type { AppDeps } from "../../app-deps";
import { ELYSIA_CONFIG } from "../../http/kernel";
import type { ServiceModule } from "../module";
import { PlanTable } from "./schemas";

export { assertCatalogueCapacity, assertTrainingAllowed, trainingsPerDayOf } from "./limits";
export { effectivePlan, planOf } from "./plan-of";

function plansRoutes(deps: AppDeps) {
  return new Elysia({ ...ELYSIA_CONFIG, name: "plans", prefix: "/api/v1/plans" }).get("/", () => deps.plans, {
    response: { 200: PlanTable },
    detail: {
      tags: ["Plans"],
      summary: "Plans and their limits (no authentication)",
      description:
        "Every plan keyed by name: monthly price, currency, numeric limits (requests per minute and month, " +
        "catalogue size, trainings per day, optional bulk-ingestion rate; without bulkPer* a plan gets 10 " +
        "per minute, 100 per hour and 1000 per day) and features. PLANS_FILE replaces the built-in table.",
    },
  });
}

export const plansModule: ServiceModule = {
  name: "plans",
  routes: plansRoutes,
  guards: (deps) => [deps.planEnforcer.guard],
};
