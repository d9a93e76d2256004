import { sql } from "drizzle-orm";
import type { Database } from "../../db/client";
import type { TenantContext } from "../../http/tenant";
import { validationError } from "../../shared/errors";
import { type MetricSums, metricsOf } from "./metrics";
import type { Grouping, MetricsQuery, MetricsReport } from "./schemas";

/** The longest range one report covers. */
export const MAX_RANGE_DAYS = 366;
const DAY_MS = 24 * 60 * 60 * 1000;

const GROUP_EXPRESSION: Record<Grouping, ReturnType<typeof sql.raw>> = {
  endpoint: sql.raw("endpoint"),
  strategy: sql.raw("coalesce(nullif(strategy, ''), 'none')"),
  variant: sql.raw("coalesce(nullif(model_variant, ''), 'none')"),
  day: sql.raw("to_char(day, 'YYYY-MM-DD')"),
};

/** A UTC day as YYYY-MM-DD, or undefined when it is no real date (2026-02-30). */
function parseDay(text: string): number | undefined {
  const time = Date.parse(`${text}T00:00:00Z`);
  return Number.isNaN(time) || new Date(time).toISOString().slice(0, 10) !== text ? undefined : time;
}

/**
 * Online metrics of the account's recommendation answers between two UTC days, per group, from the daily
 * aggregates (a range read of at most a year of days × groupings; no events are read).
 */
export async function getRecommendationMetrics({
  ctx,
  deps,
  input,
}: {
  ctx: TenantContext;
  deps: { readonly database: Database };
  input: MetricsQuery;
}): Promise<MetricsReport> {
  const to =
    input.to === undefined
      ? Date.parse(`${new Date().toISOString().slice(0, 10)}T00:00:00Z`)
      : parseDay(input.to);
  const from = input.from === undefined ? (to ?? 0) - 29 * DAY_MS : parseDay(input.from);
  const problems: { loc: string[]; msg: string; type: string }[] = [];
  if (to === undefined)
    problems.push({ loc: ["query", "to"], msg: "Not a valid date", type: "value_error.date" });
  if (from === undefined) {
    problems.push({ loc: ["query", "from"], msg: "Not a valid date", type: "value_error.date" });
  }
  if (from !== undefined && to !== undefined && from > to) {
    problems.push({ loc: ["query", "from"], msg: "Must not be after `to`", type: "value_error.range" });
  }
  if (from !== undefined && to !== undefined && to - from >= MAX_RANGE_DAYS * DAY_MS) {
    problems.push({
      loc: ["query", "from"],
      msg: `At most ${MAX_RANGE_DAYS} days`,
      type: "value_error.range",
    });
  }
  if (problems.length > 0 || from === undefined || to === undefined) throw validationError(problems);
  const groupBy = input.group_by ?? "endpoint";
  const fromDay = new Date(from).toISOString().slice(0, 10);
  const toDay = new Date(to).toISOString().slice(0, 10);
  const rows = await deps.database.rows<MetricSums & { grp: string }>(sql`
    select ${GROUP_EXPRESSION[groupBy]} as grp, sum(impressions) as impressions, sum(clicks) as clicks,
           sum(carts) as carts, sum(purchases) as purchases, sum(revenue) as revenue, sum(revenue_sq) as revenue_sq
    from recommendation_daily_metrics
    where account_id = ${ctx.accountId} and day between ${fromDay}::date and ${toDay}::date
    group by 1
    having sum(impressions) > 0 or sum(clicks) + sum(carts) + sum(purchases) > 0
    order by 1`);
  return {
    from: fromDay,
    to: toDay,
    groupBy,
    groups: rows.map((row) => ({ group: row.grp, ...metricsOf(row) })),
  };
}
