/**
 * Fixed-horizon 95% intervals for per-impression metrics. Pure functions over counts, so they can be computed
 * from the daily aggregates without touching events.
 */

/** The standard normal's 97.5% quantile: two-sided 95% intervals. */
export const Z_95 = 1.959963984540054;

export interface Interval {
  low: number;
  high: number;
}

/**
 * Wilson score interval for a proportion `successes / trials`: unlike the normal approximation it stays
 * within [0, 1] and is sensible for rare events (click rates of a few per cent) and small samples. Counts
 * above the trials (a shown item bought twice) are clamped to the trials. No trials: the whole [0, 1].
 */
export function wilsonInterval(successes: number, trials: number, z = Z_95): Interval {
  if (trials <= 0) return { low: 0, high: 1 };
  const p = Math.min(successes, trials) / trials;
  const z2 = z * z;
  const denominator = 1 + z2 / trials;
  const centre = (p + z2 / (2 * trials)) / denominator;
  const half = (z * Math.sqrt((p * (1 - p)) / trials + z2 / (4 * trials * trials))) / denominator;
  return { low: Math.max(0, centre - half), high: Math.min(1, centre + half) };
}

/** A per-impression quantity summed over n impressions: its sum and sum of squares (zeros included). */
export interface Sample {
  n: number;
  sum: number;
  sumSq: number;
}

export function sampleMean(sample: Sample): number {
  return sample.n > 0 ? sample.sum / sample.n : 0;
}

/** The (population) variance of one impression's value; 0 for fewer than two impressions. */
export function sampleVariance(sample: Sample): number {
  if (sample.n < 2) return 0;
  const mean = sample.sum / sample.n;
  return Math.max(0, sample.sumSq / sample.n - mean * mean);
}

/** Normal-approximation interval for the mean (revenue per impression); not below 0 for a non-negative value. */
export function meanInterval(sample: Sample, z = Z_95, nonNegative = true): Interval {
  if (sample.n <= 0) return { low: 0, high: 0 };
  const mean = sampleMean(sample);
  const half = z * Math.sqrt(sampleVariance(sample) / sample.n);
  return { low: nonNegative ? Math.max(0, mean - half) : mean - half, high: mean + half };
}

/** A Bernoulli outcome's sample: every success contributes 1 to the sum and to the sum of squares. */
export function bernoulli(successes: number, trials: number): Sample {
  const s = Math.min(successes, trials);
  return { n: trials, sum: s, sumSq: s };
}
