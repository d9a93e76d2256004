import type { Config } from "../../config";
import type { Database } from "../../db/client";
import type { TenantContext } from "../../http/tenant";
import type { Logger } from "../../shared/logger";
import type { UsageCounts, UsageMeter } from "../../shared/usage-meter";
import type { PlanEnforcer } from "../plans/enforcer";
import { monthWindow } from "../plans/enforcer";
import { countCatalogue, trainingsPerDayOf } from "../plans/limits";
import { bulkRateOf, effectivePlan } from "../plans/plan-of";
import type { PlanTableType } from "../plans/schemas";
import { readUsageDays, sumCounts } from "./read-usage";

export type ReportDeps = {
  readonly database: Database;
  readonly usageMeter: UsageMeter;
  readonly logger: Logger;
  readonly plans: Readonly<PlanTableType>;
  readonly config: Config;
  readonly planEnforcer: PlanEnforcer;
};

export interface UsageReport {
  plan: string;
  subscriptionStatus: string;
  period: { start: string; end: string };
  month: UsageCounts;
  today: UsageCounts & { date: string };
  limits: {
    requestsPerMinute: number;
    monthlyRequests: number;
    maxProducts: number;
    maxEndUsers: number;
    trainingsPerDay: number;
    bulkPerMinute: number;
    bulkPerHour: number;
    bulkPerDay: number;
  };
  counts: { products: number; endUsers: number };
  remaining: { monthlyRequests: number; products: number; endUsers: number; trainingsToday: number };
}

/** This month's and today's usage against the limits in force, for the usage routes. */
export async function buildUsageReport(
  deps: ReportDeps,
  tenant: Pick<TenantContext, "accountId" | "account">,
): Promise<UsageReport> {
  const now = deps.planEnforcer.now();
  const month = monthWindow(now);
  const todayDay = new Date(now).toISOString().slice(0, 10);
  const [days, products, endUsers] = await Promise.all([
    readUsageDays(deps, tenant.accountId, month.startDay, todayDay),
    countCatalogue(deps, tenant.accountId, "products"),
    countCatalogue(deps, tenant.accountId, "endUsers"),
  ]);
  const plan = effectivePlan(deps, tenant.account);
  const bulk = bulkRateOf(plan);
  const monthTotal = sumCounts(days.values());
  const today = days.get(todayDay) ?? sumCounts([]);
  const trainingsPerDay = trainingsPerDayOf(deps, tenant);
  return {
    plan: tenant.account.plan,
    subscriptionStatus: tenant.account.subscriptionStatus,
    period: { start: new Date(month.start).toISOString(), end: new Date(month.end).toISOString() },
    month: monthTotal,
    today: { date: todayDay, ...today },
    limits: {
      requestsPerMinute: plan.limits.requestsPerMinute,
      monthlyRequests: plan.limits.monthlyRequests,
      maxProducts: plan.limits.maxProducts,
      maxEndUsers: plan.limits.maxEndUsers,
      trainingsPerDay,
      bulkPerMinute: bulk.perMinute,
      bulkPerHour: bulk.perHour,
      bulkPerDay: bulk.perDay,
    },
    counts: { products, endUsers },
    remaining: {
      monthlyRequests: Math.max(0, plan.limits.monthlyRequests - monthTotal.requests),
      products: Math.max(0, plan.limits.maxProducts - products),
      endUsers: Math.max(0, plan.limits.maxEndUsers - endUsers),
      trainingsToday: Math.max(0, trainingsPerDay - today.trainings),
    },
  };
}
