import { sql } from "drizzle-orm";
import type { Database } from "../../db/client";
import type { TenantContext } from "../../http/tenant";
import { compareArms, type Verdict } from "../../shared/stats/sequential";
import { type MetricSums, metricSample, metricsOf } from "../analytics/metrics";
import { getExperiment } from "./list";
import type { ExperimentResults, ResultMetric } from "./schemas";

/** The false-positive rate over all looks and all comparisons with the control (Bonferroni-split). */
const ALPHA = 0.05;

const finite = (x: number): number | null => (Number.isFinite(x) ? x : null);

/**
 * An experiment's results per arm from the daily aggregates (no events read): the metrics, each arm's
 * difference from the control (the first arm) with a fixed-horizon interval, and the always-valid sequential
 * test's verdict and remaining sample size (src/shared/stats/sequential.ts).
 */
export async function getExperimentResults({
  ctx,
  deps,
  input,
}: {
  ctx: TenantContext;
  deps: { readonly database: Database };
  input: { id: number; metric?: ResultMetric };
}): Promise<ExperimentResults> {
  const experiment = await getExperiment({ ctx, deps, input });
  const metric = input.metric ?? "ctr";
  const rows = await deps.database.rows<MetricSums & { arm: string }>(sql`
    select experiment_arm as arm, sum(impressions) as impressions, sum(clicks) as clicks, sum(carts) as carts,
           sum(purchases) as purchases, sum(revenue) as revenue, sum(revenue_sq) as revenue_sq
    from recommendation_daily_metrics
    where account_id = ${ctx.accountId} and experiment_id = ${experiment.id}
    group by experiment_arm`);
  const empty: MetricSums = { impressions: 0, clicks: 0, carts: 0, purchases: 0, revenue: 0, revenue_sq: 0 };
  const sums = new Map(rows.map((row) => [row.arm, row]));
  const arms = experiment.variants.map((v) => ({ arm: v, sums: sums.get(v.name) ?? empty }));
  const [control, ...treatments] = arms;
  if (control === undefined) throw new Error("experiment without arms");
  const alpha = ALPHA / Math.max(1, treatments.length);
  const verdictText = (decision: Verdict, treatment: string): string =>
    decision === "keep_running"
      ? "keep running"
      : decision === "no_difference"
        ? "no difference detectable"
        : `${decision === "treatment_better" ? treatment : control.arm.name} is better`;
  const comparisons = treatments.map(({ arm, sums: s }) => {
    const c = compareArms(metricSample(control.sums, metric), metricSample(s, metric), {
      alpha,
      minimumEffect: experiment.minimumEffect,
    });
    return {
      variant: arm.name,
      against: control.arm.name,
      difference: c.difference,
      relativeDifference: c.relativeDifference,
      interval: c.interval,
      confidenceSequence: { low: finite(c.confidenceSequence.low), high: finite(c.confidenceSequence.high) },
      decision: c.verdict,
      verdict: verdictText(c.verdict, arm.name),
      impressionsNeeded: Number.isFinite(c.impressionsNeeded) ? Math.ceil(c.impressionsNeeded) : 2147483647,
    };
  });
  // Overall: the best arm declared better than the control; the control when it beat every arm; no
  // difference when no arm differs; otherwise keep running.
  const better = comparisons
    .filter((c) => c.decision === "treatment_better")
    .sort((a, b) => b.difference - a.difference)[0];
  let verdict = "keep running";
  if (better !== undefined) verdict = `${better.variant} is better`;
  else if (comparisons.every((c) => c.decision === "control_better"))
    verdict = `${control.arm.name} is better`;
  else if (comparisons.every((c) => c.decision === "no_difference")) verdict = "no difference detectable";
  const decided = verdict !== "keep running";
  return {
    experiment,
    metric,
    alpha,
    arms: arms.map(({ arm, sums: s }) => ({ variant: arm.name, traffic: arm.traffic, ...metricsOf(s) })),
    comparisons,
    verdict,
    impressionsNeeded: decided ? 0 : Math.max(0, ...comparisons.map((c) => c.impressionsNeeded)),
  };
}
