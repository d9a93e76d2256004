import { describe, expect, test } from "bun:test";
import { createRng } from "../../src/engine/rng";
import { bernoulli, meanInterval, wilsonInterval } from "../../src/shared/stats/intervals";
import {
  compareArms,
  impressionsToDetect,
  mixtureHalfWidth,
  mixtureLikelihoodRatio,
  normalQuantile,
} from "../../src/shared/stats/sequential";

describe("fixed-horizon intervals", () => {
  test("the Wilson interval matches published values and stays within [0, 1]", () => {
    // Newcombe (1998), Table I: 0/10 → 0–0.2775; 81/263 → 0.2553–0.3662.
    const none = wilsonInterval(0, 10);
    expect(none.low).toBe(0);
    expect(none.high).toBeCloseTo(0.2775, 4);
    const some = wilsonInterval(81, 263);
    expect(some.low).toBeCloseTo(0.2553, 4);
    expect(some.high).toBeCloseTo(0.3662, 4);
    expect(wilsonInterval(12, 10)).toEqual(wilsonInterval(10, 10));
    expect(wilsonInterval(0, 0)).toEqual({ low: 0, high: 1 });
  });

  test("the mean interval is mean ± 1.96 standard errors, cut at 0 for a non-negative value", () => {
    // Values 0, 0, 10, 10: mean 5, population variance 25, standard error 2.5.
    const interval = meanInterval({ n: 4, sum: 20, sumSq: 200 });
    expect(interval.low).toBeCloseTo(5 - 1.959964 * 2.5, 5);
    expect(interval.high).toBeCloseTo(5 + 1.959964 * 2.5, 5);
    expect(meanInterval({ n: 4, sum: 1, sumSq: 100 }).low).toBe(0);
  });

  test("the normal quantile matches tables", () => {
    expect(normalQuantile(0.975)).toBeCloseTo(1.959964, 5);
    expect(normalQuantile(0.8)).toBeCloseTo(0.841621, 5);
    expect(normalQuantile(0.01)).toBeCloseTo(-2.326348, 5);
  });
});

describe("mixture sequential test", () => {
  test("the likelihood ratio reaches 1/α exactly where the difference leaves the confidence sequence", () => {
    const v = 1e-5;
    const tau2 = 4e-5;
    const half = mixtureHalfWidth(v, tau2, 0.05);
    expect(mixtureLikelihoodRatio(half, v, tau2)).toBeCloseTo(20, 6);
    expect(mixtureLikelihoodRatio(half * 0.99, v, tau2)).toBeLessThan(20);
    expect(mixtureLikelihoodRatio(-half * 1.01, v, tau2)).toBeGreaterThan(20);
  });

  test("the always-valid sequence is wider than the fixed-horizon interval, and both narrow with more data", () => {
    const small = compareArms(bernoulli(50, 1000), bernoulli(60, 1000));
    const large = compareArms(bernoulli(500, 10_000), bernoulli(600, 10_000));
    for (const c of [small, large]) {
      expect(c.confidenceSequence.high - c.confidenceSequence.low).toBeGreaterThan(
        c.interval.high - c.interval.low,
      );
    }
    expect(large.confidenceSequence.high - large.confidenceSequence.low).toBeLessThan(
      small.confidenceSequence.high - small.confidenceSequence.low,
    );
    expect(large.difference).toBeCloseTo(0.01, 10);
    expect(large.relativeDifference).toBeCloseTo(0.2, 10);
  });

  test("too few impressions give no verdict; a clear difference is declared for the better arm, either way round", () => {
    expect(compareArms(bernoulli(0, 50), bernoulli(30, 50)).verdict).toBe("keep_running");
    expect(compareArms(bernoulli(500, 10_000), bernoulli(1000, 10_000)).verdict).toBe("treatment_better");
    expect(compareArms(bernoulli(1000, 10_000), bernoulli(500, 10_000)).verdict).toBe("control_better");
    const done = compareArms(bernoulli(500, 10_000), bernoulli(1000, 10_000));
    expect(done.impressionsNeeded).toBe(0);
  });

  test("with a huge sample and no difference, the sequence fits inside the minimum effect: no difference detectable", () => {
    const c = compareArms(bernoulli(250_000, 5_000_000), bernoulli(250_300, 5_000_000));
    expect(c.verdict).toBe("no_difference");
  });

  test("the sample size still needed shrinks as data arrive and is larger for a smaller effect", () => {
    const early = compareArms(bernoulli(50, 1000), bernoulli(55, 1000));
    const later = compareArms(bernoulli(150, 3000), bernoulli(165, 3000));
    expect(early.verdict).toBe("keep_running");
    expect(later.impressionsNeeded).toBeLessThan(early.impressionsNeeded);
    const subtle = compareArms(bernoulli(50, 1000), bernoulli(50, 1000), { minimumEffect: 0.05 });
    const coarse = compareArms(bernoulli(50, 1000), bernoulli(50, 1000), { minimumEffect: 0.2 });
    expect(subtle.impressionsNeeded).toBeGreaterThan(coarse.impressionsNeeded);
  });
});

/**
 * Simulated experiments with the statistics checked in-process after every batch, as a shop looking at the
 * results every day would. Clicks are Bernoulli per impression with the arm's click-through rate.
 */
function simulate(seed: number, ctrA: number, ctrB: number, batch: number, maxBatches: number) {
  const rng = createRng(seed);
  let clicksA = 0;
  let clicksB = 0;
  let n = 0;
  for (let look = 0; look < maxBatches; look++) {
    for (let i = 0; i < batch; i++) {
      if (rng() < ctrA) clicksA++;
      if (rng() < ctrB) clicksB++;
    }
    n += batch;
    const result = compareArms(bernoulli(clicksA, n), bernoulli(clicksB, n));
    if (result.verdict !== "keep_running") return { verdict: result.verdict, impressions: n };
  }
  return { verdict: "keep_running" as const, impressions: n };
}

describe("simulated experiments", () => {
  test("over 250 A/A experiments checked after every one of 40 batches, at most 5% ever declare a difference", () => {
    let falsePositives = 0;
    const runs = 250;
    for (let seed = 1; seed <= runs; seed++) {
      const { verdict } = simulate(seed, 0.05, 0.05, 500, 40);
      if (verdict === "treatment_better" || verdict === "control_better") falsePositives++;
    }
    expect(falsePositives / runs).toBeLessThanOrEqual(0.05);
  });

  test("a true +20% click-through arm is declared better, mostly within the sample size the test expects", () => {
    const runs = 60;
    // Planned for this true effect at 80% power, with the test's default mixing scale (10% of 5%).
    const expected = impressionsToDetect(0.01, 0.05 * 0.95 + 0.06 * 0.94, 0.005);
    expect(expected).toBeGreaterThan(1000);
    expect(expected).toBeLessThan(40_000);
    let declared = 0;
    let withinExpected = 0;
    for (let seed = 1; seed <= runs; seed++) {
      const result = simulate(10_000 + seed, 0.05, 0.06, 500, 200);
      if (result.verdict === "treatment_better") declared++;
      if (result.verdict === "treatment_better" && result.impressions <= expected) withinExpected++;
    }
    expect(declared).toBe(runs);
    // At 80% power, about four runs in five end by then.
    expect(withinExpected / runs).toBeGreaterThanOrEqual(0.7);
  });
});
