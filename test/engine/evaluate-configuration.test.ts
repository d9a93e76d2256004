import { describe, expect, test } from "bun:test";
import { evaluateConfiguration, trainModel } from "../../src/engine";
import { reproduceOptions, sameConfiguration } from "../../src/training/reproduce-params";
import { smallSynthetic } from "./helpers";

describe("evaluateConfiguration (the published configuration on a new run's hold-out)", () => {
  const data = smallSynthetic(8_000, 5);
  const input = { events: data.events, items: data.items };

  test("the configuration a searched run chose, reproduced from its params, scores exactly its hold-out figure", () => {
    const trained = trainModel(input, { seed: 42 });
    const options = reproduceOptions(trained.params, { seed: 42 });
    if (typeof options === "string") throw new Error(options);
    expect(options.search).toBe(false);
    const scored = evaluateConfiguration(input, options);
    expect(scored.primary).toBe(trained.params.primary as "ease" | "als");
    expect(scored.metrics.evaluatedUsers).toBe(trained.metrics.evaluatedUsers);
    expect(scored.metrics.ndcgAt10!).toBeCloseTo(trained.metrics.ndcgAt10!, 6);
  }, 120_000);

  test("a forced ALS configuration is reproduced as ALS with its own hold-out figure", () => {
    const als = trainModel(input, {
      search: false,
      maxEaseMinSupport: 0,
      als: { factors: 4, iterations: 1, regularization: 10 },
    });
    expect(als.params.primary).toBe("als");
    const options = reproduceOptions(als.params, {});
    if (typeof options === "string") throw new Error(options);
    const scored = evaluateConfiguration(input, options);
    expect(scored.primary).toBe("als");
    expect(scored.metrics.ndcgAt10!).toBeCloseTo(als.metrics.ndcgAt10!, 6);
  }, 120_000);
});

describe("reproduceOptions / sameConfiguration", () => {
  const params = {
    primary: "ease",
    lambda: 200,
    easeTargetItems: 6000,
    als: { factors: 8, iterations: 3, regularization: 0.1, alpha: 10, cgSteps: 3, seed: 42, native: true },
    blend: { cf: 1, als: 0, content: 0.1, popularity: 0 },
    weights: {
      view: 1,
      click: 1.5,
      cart: 3,
      purchase: 5,
      like: 2,
      dislike: -5,
      search: 0.5,
      rating: 1,
      ratingMax: 5,
      ratingPower: 1,
      halfLifeDays: "auto",
    },
    contentDims: 256,
  };

  test("stored params become search-free options on the run's own split settings", () => {
    const options = reproduceOptions(params, { seed: 7, holdoutFraction: 0.25 });
    expect(options).toMatchObject({
      seed: 7,
      holdoutFraction: 0.25,
      search: false,
      lambda: 200,
      easeTargetItems: 6000,
      blend: params.blend,
      contentDims: 256,
      maxEaseMinSupport: 3,
      weights: { halfLifeDays: "auto", purchase: 5 },
    });
  });

  test("params missing a field the fit needs are reported as not reproducible, with the reason", () => {
    expect(reproduceOptions({}, {})).toContain("primary algorithm");
    const { blend: _, ...withoutBlend } = params;
    expect(reproduceOptions(withoutBlend, {})).toContain("blend weights");
    expect(reproduceOptions({ ...params, lambda: null }, {})).toContain("EASE λ");
  });

  test("equal configurations are recognised regardless of key order or search trials; any change is not", () => {
    const reordered = {
      searchTrials: [{ what: "x" }],
      ...params,
      blend: { popularity: 0, content: 0.1, als: 0, cf: 1 },
    };
    expect(sameConfiguration(params, reordered, {})).toBe(true);
    expect(sameConfiguration(params, { ...params, lambda: 500 }, {})).toBe(false);
    expect(sameConfiguration(params, { ...params, primary: "als" }, {})).toBe(false);
    expect(sameConfiguration({}, {}, {})).toBe(false);
  });
});
