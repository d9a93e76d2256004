/**
 * An always-valid comparison of two arms of an experiment: the mixture sequential probability ratio test
 * (mSPRT) of Johari, Pekelis and Walsh ("Always Valid Inference", 2017/2022) on the difference of the arms'
 * per-impression means, with a normal mixing distribution N(0, τ²) over the difference. Its statistic
 *
 *   Λ = sqrt(v / (v + τ²)) · exp(θ̂² τ² / (2 v (v + τ²)))
 *
 * (θ̂ the observed difference, v its variance) is a nonnegative supermartingale under "no difference", so by
 * Ville's inequality the chance that it ever exceeds 1/α is at most α: the test may be looked at after every
 * batch, every day, without inflating false positives. Inverting it gives the always-valid confidence sequence
 * θ̂ ± w with w² = v (v + τ²) / τ² · (2 log(1/α) + log((v + τ²) / v)) (the normal-mixture boundary of Howard
 * et al., "Time-uniform, nonparametric, nonasymptotic confidence sequences", 2021). The variance is
 * plugged in from the data, which makes the guarantee asymptotic; the simulation test checks the false-positive
 * rate at the sample sizes a shop sees.
 *
 * τ is set from the effect the test should be sensitive to: `minimumEffect` (relative, e.g. 0.1 for ±10%) of
 * the control arm's mean. "No difference detectable" means the confidence sequence has shrunk inside
 * ±minimumEffect: any remaining difference is smaller than what the experiment was set up to find.
 */
import { type Interval, type Sample, sampleMean, sampleVariance, Z_95 } from "./intervals";

export type Verdict = "keep_running" | "treatment_better" | "control_better" | "no_difference";

export interface SequentialOptions {
  /** Chance of declaring a difference in an A/A experiment, over all looks. Default 0.05. */
  alpha?: number;
  /** The smallest relative difference worth finding (0.1 = 10% of the control's mean). Default 0.1. */
  minimumEffect?: number;
  /** Power used for the remaining sample size. Default 0.8. */
  power?: number;
  /** Below this many impressions per arm no verdict is given (the plug-in variance is not yet usable). */
  minimumImpressions?: number;
}

export interface Comparison {
  /** Treatment mean minus control mean. */
  difference: number;
  /** The same, relative to the control's mean (null when the control's mean is 0). */
  relativeDifference: number | null;
  /** Fixed-horizon 95% interval of the difference: valid for one look at a planned sample size only. */
  interval: Interval;
  /** Always-valid (1 − α) confidence sequence of the difference at this look. */
  confidenceSequence: Interval;
  /** The mSPRT statistic Λ (≥ 1/α: significant). */
  likelihoodRatio: number;
  verdict: Verdict;
  /** Impressions per arm still needed for the test to end at the given power; 0 once it has ended. */
  impressionsNeeded: number;
}

const DEFAULTS = { alpha: 0.05, minimumEffect: 0.1, power: 0.8, minimumImpressions: 100 };

/** Standard normal quantile (Acklam's rational approximation; relative error below 1.2e-9). */
export function normalQuantile(p: number): number {
  if (p <= 0 || p >= 1) throw new RangeError("normalQuantile needs 0 < p < 1");
  const a = [
    -39.69683028665376, 220.9460984245205, -275.9285104469687, 138.357751867269, -30.66479806614716,
    2.506628277459239,
  ];
  const b = [
    -54.47609879822406, 161.5858368580409, -155.6989798598866, 66.80131188771972, -13.28068155288572,
  ];
  const c = [
    -0.007784894002430293, -0.3223964580411365, -2.400758277161838, -2.549732539343734, 4.374664141464968,
    2.938163982698783,
  ];
  const d = [0.007784695709041462, 0.3224671290700398, 2.445134137142996, 3.754408661907416];
  const low = 0.02425;
  if (p < low) {
    const q = Math.sqrt(-2 * Math.log(p));
    return (
      (((((c[0]! * q + c[1]!) * q + c[2]!) * q + c[3]!) * q + c[4]!) * q + c[5]!) /
      ((((d[0]! * q + d[1]!) * q + d[2]!) * q + d[3]!) * q + 1)
    );
  }
  if (p > 1 - low) return -normalQuantile(1 - p);
  const q = p - 0.5;
  const r = q * q;
  return (
    ((((((a[0]! * r + a[1]!) * r + a[2]!) * r + a[3]!) * r + a[4]!) * r + a[5]!) * q) /
    (((((b[0]! * r + b[1]!) * r + b[2]!) * r + b[3]!) * r + b[4]!) * r + 1)
  );
}

/** Half-width of the always-valid confidence sequence for a difference whose estimate has variance v. */
export function mixtureHalfWidth(v: number, tau2: number, alpha: number): number {
  if (v <= 0) return 0;
  return Math.sqrt(((v * (v + tau2)) / tau2) * (2 * Math.log(1 / alpha) + Math.log((v + tau2) / v)));
}

/** The mSPRT statistic for an observed difference `theta` with variance v. */
export function mixtureLikelihoodRatio(theta: number, v: number, tau2: number): number {
  if (v <= 0) return theta === 0 ? 1 : Number.POSITIVE_INFINITY;
  return Math.sqrt(v / (v + tau2)) * Math.exp((theta * theta * tau2) / (2 * v * (v + tau2)));
}

/**
 * Variance of one impression's value for the test: the sample variance, but for a 0/1 metric with few or no
 * successes yet it is taken from a shrunk rate ((x + 1) / (n + 2)), so that an arm with no clicks so far does
 * not look certain.
 */
function unitVariance(sample: Sample): number {
  const isBinary = sample.sum === sample.sumSq;
  if (isBinary && sample.n > 0) {
    const p = (sample.sum + 1) / (sample.n + 2);
    return p * (1 - p);
  }
  return sampleVariance(sample);
}

export function compareArms(control: Sample, treatment: Sample, options: SequentialOptions = {}): Comparison {
  const { alpha, minimumEffect, power, minimumImpressions } = { ...DEFAULTS, ...options };
  const meanA = sampleMean(control);
  const meanB = sampleMean(treatment);
  const difference = meanB - meanA;
  const varA = unitVariance(control);
  const varB = unitVariance(treatment);
  const v = (control.n > 0 ? varA / control.n : 0) + (treatment.n > 0 ? varB / treatment.n : 0);
  const fixedHalf = Z_95 * Math.sqrt(v);
  // τ: the effect the experiment should find, in the metric's units (at least a tiny positive scale).
  const effect = Math.max(minimumEffect * Math.abs(meanA), 1e-9);
  const tau2 = effect * effect;
  const ready = control.n >= minimumImpressions && treatment.n >= minimumImpressions && v > 0;
  const half = ready ? mixtureHalfWidth(v, tau2, alpha) : Number.POSITIVE_INFINITY;
  const likelihoodRatio = ready ? mixtureLikelihoodRatio(difference, v, tau2) : 1;

  let verdict: Verdict = "keep_running";
  if (ready && difference - half > 0) verdict = "treatment_better";
  else if (ready && difference + half < 0) verdict = "control_better";
  else if (ready && difference - half > -effect && difference + half < effect) verdict = "no_difference";

  let impressionsNeeded = 0;
  if (verdict === "keep_running") {
    // Per-impression variance of the difference with equal arms: (varA + varB) per impression of each arm.
    const unit = varA + varB > 0 ? varA + varB : 0.5;
    const total = impressionsToDetect(Math.max(Math.abs(difference), effect), unit, effect, { alpha, power });
    impressionsNeeded = Math.max(0, Math.max(total, minimumImpressions) - Math.min(control.n, treatment.n));
  }

  return {
    difference,
    relativeDifference: meanA === 0 ? null : difference / meanA,
    interval: { low: difference - fixedHalf, high: difference + fixedHalf },
    confidenceSequence: ready
      ? { low: difference - half, high: difference + half }
      : { low: Number.NEGATIVE_INFINITY, high: Number.POSITIVE_INFINITY },
    likelihoodRatio,
    verdict,
    impressionsNeeded,
  };
}

/**
 * Impressions per arm at which a true difference `difference` is declared with probability `power` by the
 * test above (mixing scale `effect`), for a difference whose variance per impression of each arm is
 * `unitVariance` (varA + varB with equal arms). Used for the sample size still needed and for planning.
 */
export function impressionsToDetect(
  difference: number,
  unitVariance: number,
  effect: number,
  options: { alpha?: number; power?: number } = {},
): number {
  const alpha = options.alpha ?? DEFAULTS.alpha;
  const zPower = normalQuantile(options.power ?? DEFAULTS.power);
  const tau2 = effect * effect;
  const target = Math.abs(difference);
  if (target === 0 || unitVariance <= 0) return Number.POSITIVE_INFINITY;
  const detected = (n: number) => {
    const v = unitVariance / n;
    return target - zPower * Math.sqrt(v) >= mixtureHalfWidth(v, tau2, alpha);
  };
  let high = 1;
  while (!detected(high)) {
    high *= 2;
    if (high > 1e13) return Number.POSITIVE_INFINITY;
  }
  let low = Math.floor(high / 2);
  while (high - low > 1) {
    const mid = Math.floor((low + high) / 2);
    if (detected(mid)) high = mid;
    else low = mid;
  }
  return high;
}
