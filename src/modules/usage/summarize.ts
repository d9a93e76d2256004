import type { TenantContext } from "../../http/tenant";
import { subscriptionRenewsAt } from "./read-usage";
import type { UsageSummaryType } from "./schemas";
import { buildUsageReport, type ReportDeps } from "./usage-report";

export async function summarizeUsage({
  ctx,
  deps,
}: {
  ctx: TenantContext;
  deps: ReportDeps;
}): Promise<UsageSummaryType> {
  const [report, renewsAt] = await Promise.all([
    buildUsageReport(deps, ctx),
    subscriptionRenewsAt(deps, ctx.accountId),
  ]);
  return {
    plan: report.plan,
    subscriptionStatus: report.subscriptionStatus,
    subscriptionRenewsAt: renewsAt === null ? null : renewsAt.toISOString(),
    month: { ...report.period, ...report.month },
    today: report.today,
    limits: report.limits,
    counts: report.counts,
    remaining: report.remaining,
  };
}
