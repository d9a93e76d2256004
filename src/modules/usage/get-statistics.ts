import type { TenantContext } from "../../http/tenant";
import type { UsageStatisticsType } from "./schemas";
import { buildUsageReport, type ReportDeps } from "./usage-report";

export async function getUsageStatistics({
  ctx,
  deps,
}: {
  ctx: TenantContext;
  deps: ReportDeps;
}): Promise<UsageStatisticsType> {
  const report = await buildUsageReport(deps, ctx);
  return {
    plan: report.plan,
    subscriptionStatus: report.subscriptionStatus,
    period: report.period,
    requests: report.month.requests,
    recommendations: report.month.recommendations,
    ingestedRecords: report.month.ingestedRecords,
    trainings: report.month.trainings,
    limits: report.limits,
    remaining: report.remaining,
  };
}
