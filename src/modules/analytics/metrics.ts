/**
 * Online metrics of a set of answers from their summed daily aggregates: rates per impression with Wilson
 * intervals, revenue per 1,000 impressions with a normal interval (its variance from the summed squares).
 */
import { bernoulli, meanInterval, type Sample, wilsonInterval } from "../../shared/stats/intervals";
import type { Estimate, GroupMetrics } from "./schemas";

/** Summed aggregate columns; revenue sums arrive as numeric text. */
export interface MetricSums {
  impressions: number | string;
  clicks: number | string;
  carts: number | string;
  purchases: number | string;
  revenue: number | string;
  revenue_sq: number | string;
}

const rate = (successes: number, trials: number): Estimate => {
  const interval = wilsonInterval(successes, trials);
  return { value: trials > 0 ? Math.min(successes, trials) / trials : 0, ...interval };
};

export function revenueSample(sums: MetricSums): Sample {
  return { n: Number(sums.impressions), sum: Number(sums.revenue), sumSq: Number(sums.revenue_sq) };
}

export function metricsOf(sums: MetricSums): GroupMetrics {
  const impressions = Number(sums.impressions);
  const clicks = Number(sums.clicks);
  const carts = Number(sums.carts);
  const purchases = Number(sums.purchases);
  const revenue = revenueSample(sums);
  const perThousand = meanInterval(revenue);
  return {
    impressions,
    clicks,
    addToCarts: carts,
    purchases,
    revenue: revenue.sum,
    clickThroughRate: rate(clicks, impressions),
    addToCartRate: rate(carts, impressions),
    conversionRate: rate(purchases, impressions),
    revenuePerThousandImpressions: {
      value: impressions > 0 ? (1000 * revenue.sum) / impressions : 0,
      low: 1000 * perThousand.low,
      high: 1000 * perThousand.high,
    },
  };
}

/** The per-impression sample of a metric, for comparing arms. */
export function metricSample(
  sums: MetricSums,
  metric: "ctr" | "add_to_cart" | "conversion" | "revenue",
): Sample {
  const n = Number(sums.impressions);
  if (metric === "revenue") return revenueSample(sums);
  const successes = Number(
    metric === "ctr" ? sums.clicks : metric === "add_to_cart" ? sums.carts : sums.purchases,
  );
  return bernoulli(successes, n);
}
