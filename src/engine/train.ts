import { type AlsOptions, DEFAULT_ALS } from "./als";
import type { CooccurrenceOptions } from "./cooccurrence";
import { type EaseModel, itemSupport } from "./ease";
import {
  evaluateRanking,
  type HoldoutSplit,
  hashHoldoutSplit,
  heldOutSets,
  MIN_EVALUABLE_USERS,
} from "./evaluate";
import { DEFAULT_BLEND, type FitConfig, fitModel } from "./fit";
import type { BlendWeights, Model } from "./model";
import type { PopularityOptions } from "./popularity";
import { rankForUser } from "./ranking/personal";
import { createRng } from "./rng";
import { easeFits, type SearchOptions, searchConfig, userHistory } from "./search";
import type { Interactions, ItemMeta, ProgressFn } from "./types";
import { buildWeightedMatrix, DEFAULT_WEIGHTS, selectEvents, type WeightConfig } from "./weighting";

export interface TrainInput {
  events: Interactions;
  items?: readonly (ItemMeta | undefined)[];
}

export interface TrainOptions {
  weights?: Partial<WeightConfig>;
  seed?: number;
  holdoutFraction?: number;
  /** Pick λ / ALS parameters and blend weights on a validation split (default true). */
  search?: boolean;
  /** EASE item budget: rarely seen items are dropped from EASE until at most this many remain. */
  easeTargetItems?: number;
  /** Items need this many distinct users to enter EASE (single-user items only add noise and O(m³) cost). */
  easeMinSupport?: number;
  /** Cap on Σ m³ over the EASE fits of the λ search (default ≈ four fits at 3,000 items). */
  lambdaCostBudget?: number;
  /** Fall back to ALS when meeting the budget would drop items seen by this many users or more. */
  maxEaseMinSupport?: number;
  /** Entries kept per EASE row in the model (largest |b|); 0 = dense. */
  easeKeepPerRow?: number;
  /** EASE λ used without search, and the search grid. */
  lambda?: number;
  lambdas?: number[];
  /** EASE's user weighting (see `EaseOptions.userExponent`) used without search, and the search grid. */
  easeUserExponent?: number;
  easeUserExponents?: number[];
  als?: Partial<AlsOptions>;
  /** Blend weights used without search (the search picks its own). */
  blend?: Partial<BlendWeights>;
  contentDims?: number;
  popularity?: Partial<PopularityOptions>;
  cooccurrence?: Partial<CooccurrenceOptions>;
  /** Users evaluated on the hold-out (random subset beyond this, for very large tenants). */
  maxEvalUsers?: number;
  /** Catalogues at least this large get HNSW indexes in the artifact (smaller ones are scored exactly). */
  annMinItems?: number;
  /** Use the C kernels when they can be built (default true). */
  native?: boolean;
  /**
   * Stable keys of the dense users and items (database ids or external ids) the hold-out is drawn by: a
   * user-item pair is held out by a hash of its keys, so the split is the same whatever order the events
   * were loaded in and however dense indices were assigned. Absent: the dense indices are the keys.
   */
  splitKeys?: { users: ArrayLike<number | string>; items: ArrayLike<number | string> };
}

export interface TrainMetrics {
  ndcgAt10: number | null;
  recallAt20: number | null;
  coverageAt10: number | null;
  popularityNdcgAt10: number | null;
  popularityRecallAt20: number | null;
  evaluatedUsers: number;
  note?: string;
}

export interface TrainResult {
  model: Model;
  metrics: TrainMetrics;
  params: Record<string, unknown>;
  trainingSeconds: number;
}

function baseConfig(o: TrainOptions): FitConfig {
  return {
    weights: { ...DEFAULT_WEIGHTS, ...o.weights },
    ease: {
      lambda: o.lambda ?? 200,
      keepPerRow: 0,
      values: "binary",
      userExponent: o.easeUserExponent ?? 0,
      targetItems: o.easeTargetItems ?? 6000,
      minSupport: o.easeMinSupport ?? 2,
    },
    als: { ...DEFAULT_ALS, ...o.als },
    blend: { ...DEFAULT_BLEND, ...o.blend },
    contentDims: o.contentDims ?? 256,
    popularity: o.popularity ?? {},
    cooccurrence: o.cooccurrence ?? {},
    native: o.native ?? true,
  };
}

/**
 * The training pipeline: split → search on a validation split of the training part → fit on the training
 * part and measure on the hold-out (against popularity) → refit the chosen configuration on all events,
 * which is the model returned. Pure apart from the progress callback, so it runs unchanged in a Worker.
 */
export function trainModel(
  input: TrainInput,
  options: TrainOptions = {},
  onProgress?: ProgressFn,
): TrainResult {
  const started = performance.now();
  const report = (stage: string, pct: number) =>
    onProgress?.(stage, Math.max(0, Math.min(100, Math.round(pct))));
  const seed = options.seed ?? 42;
  const { events } = input;
  const items = withoutConstantPrice(input.items);
  let config = baseConfig(options);
  report("split", 0);
  const split = trainingSplit(events, options, seed);
  const trainEvents = selectEvents(events, split.trainIdx);
  const searchOpts: SearchOptions = {
    seed,
    lambdas: options.lambdas ?? [200, 400, 100, 800],
    userExponents: options.easeUserExponents ?? [0, 0.25, 0.5],
    alsGrid: [
      { regularization: 0.1, alpha: 10 },
      { regularization: 0.1, alpha: 40 },
      { regularization: 1, alpha: 10 },
    ],
    maxEaseMinSupport: options.maxEaseMinSupport ?? 3,
    maxUsers: 2000,
    lambdaCostBudget: options.lambdaCostBudget ?? 1.2e11,
    maxCachedFloats: 60_000_000,
  };
  let trials: unknown[] = [];
  let chosenEase: EaseModel | null | undefined;
  if (options.search !== false) {
    report("search", 2);
    // Chosen on the hold-out the job reports: one split, so the choice sees as much data as the measured
    // model (a split nested inside it would choose for a smaller data set than the one served).
    const found = searchConfig(events, items, config, { ...searchOpts, split }, (f) =>
      report("search", 2 + 48 * f),
    );
    config = found.config;
    trials = found.trials;
    if (found.ease !== null) chosenEase = found.ease;
  }
  report("evaluate", 50);
  // Decide EASE vs ALS once, on the training part, so the measured model and the published one agree.
  if (
    config.ease &&
    !easeFits(buildWeightedMatrix(trainEvents, config.weights), config, searchOpts.maxEaseMinSupport)
  ) {
    config = { ...config, ease: null };
  }
  const evalFit = fitModel(
    trainEvents,
    items,
    config,
    {
      needAls: false,
      withCooccurrence: false,
      ...(config.ease && chosenEase !== undefined ? { ease: chosenEase } : {}),
    },
    (s, f) => report(`evaluate:${s}`, 50 + 20 * f),
  );
  const metrics = evaluateModel(
    evalFit.model,
    evalFit.matrix,
    events,
    split,
    options.maxEvalUsers ?? 5000,
    seed,
  );
  report("refit", 75);
  const params: Record<string, unknown> = {
    primary: evalFit.model.ease ? "ease" : "als",
    lambda: config.ease?.lambda ?? null,
    easeUserExponent: config.ease?.userExponent ?? null,
    easeTargetItems: config.ease?.targetItems ?? null,
    als: config.als,
    blend: config.blend,
    weights: config.weights,
    contentDims: config.contentDims,
    seed,
    holdout: {
      fraction: options.holdoutFraction ?? 0.2,
      minInteractions: 5,
      unit: "user-item pair",
      method: "hash",
      seed,
    },
    searchTrials: trials,
    refitOnAllData: true,
  };
  const finalCfg: FitConfig = {
    ...config,
    ease: config.ease ? { ...config.ease, keepPerRow: options.easeKeepPerRow ?? 0 } : null,
  };
  const annMinItems = options.annMinItems ?? 20_000;
  const final = fitModel(
    events,
    items,
    finalCfg,
    { needAls: true, withCooccurrence: true, params, annMinItems },
    (s, f) => report(`refit:${s}`, 75 + 24 * f),
  );
  report("done", 100);
  return { model: final.model, metrics, params, trainingSeconds: (performance.now() - started) / 1000 };
}

/**
 * The hold-out a job measures on: each user-item pair of a user with at least 5 distinct items is held out
 * when a hash of (seed, user key, item key) falls below the fraction (see `hashHoldoutSplit`). It depends on
 * the set of events alone, never on their order, so two loads of the same data split alike even while new
 * events arrive concurrently.
 */
export function trainingSplit(events: Interactions, options: TrainOptions, seed: number): HoldoutSplit {
  const keys = options.splitKeys;
  return hashHoldoutSplit(events, {
    seed,
    fraction: options.holdoutFraction ?? 0.2,
    minInteractions: 5,
    ...(keys
      ? { userKey: (u: number) => String(keys.users[u]), itemKey: (i: number) => String(keys.items[i]) }
      : {}),
  });
}

/**
 * Measures one fixed configuration (no search, no refit) exactly as trainModel measures its choice: the
 * same split for the same seed and fraction, the same EASE-or-ALS rule, the same hold-out users. Used to
 * score a previously published configuration on a new run's hold-out, so the two figures are comparable.
 */
export function evaluateConfiguration(
  input: TrainInput,
  options: TrainOptions = {},
  onProgress?: ProgressFn,
): { metrics: TrainMetrics; primary: "ease" | "als" } {
  const seed = options.seed ?? 42;
  const { events } = input;
  const items = withoutConstantPrice(input.items);
  const split = trainingSplit(events, options, seed);
  const trainEvents = selectEvents(events, split.trainIdx);
  let config = baseConfig(options);
  const weighted = buildWeightedMatrix(trainEvents, config.weights);
  if (config.ease && !easeFits(weighted, config, options.maxEaseMinSupport ?? 3))
    config = { ...config, ease: null };
  const fit = fitModel(trainEvents, items, config, { needAls: false, withCooccurrence: false }, (s, f) =>
    onProgress?.(s, Math.round(100 * f)),
  );
  const metrics = evaluateModel(fit.model, fit.matrix, events, split, options.maxEvalUsers ?? 5000, seed);
  return { metrics, primary: fit.model.ease ? "ease" : "als" };
}

/**
 * A price every product shares says nothing about any of them, yet as a content token it lifts every
 * pairwise similarity by the same amount and so flattens the content ranking (measured on ml-latest-small
 * sent through the API, where each movie needs some price > 0: NDCG@10 0.3787 → 0.3779). Catalogues
 * without real prices get such a placeholder; they train as if no price had been given.
 */
export function withoutConstantPrice(
  items: readonly (ItemMeta | undefined)[] | undefined,
): readonly (ItemMeta | undefined)[] | undefined {
  if (!items) return items;
  let price: number | undefined;
  let priced = 0;
  for (const m of items) {
    if (m?.price === undefined) continue;
    if (priced > 0 && m.price !== price) return items;
    price = m.price;
    priced++;
  }
  if (priced < 2) return items;
  return items.map((m) => {
    if (m?.price === undefined) return m;
    const { price: _, ...rest } = m;
    return rest;
  });
}

function evaluateModel(
  model: Model,
  train: import("./sparse").Csr,
  events: Interactions,
  split: HoldoutSplit,
  maxUsers: number,
  seed: number,
): TrainMetrics {
  const held = heldOutSets(events, split, train);
  let users = [...held.keys()].sort((a, b) => a - b);
  if (users.length > maxUsers) {
    const rng = createRng(seed + 3);
    users = users
      .map((u) => [u, rng()] as const)
      .sort((a, b) => a[1] - b[1])
      .slice(0, maxUsers)
      .map(([u]) => u)
      .sort((a, b) => a - b);
  }
  // Ranked as the route ranks (candidates included on large catalogues): the job reports what it serves.
  const r = evaluateRanking(train, held, () => {}, {
    users,
    minUsers: MIN_EVALUABLE_USERS,
    ranker: (u, k) => rankForUser(model, userHistory(train, u), k),
  });
  // The baseline is plain distinct-user counts on the training part, as in the published reference figures.
  const pop = itemSupport(train);
  const p = evaluateRanking(
    train,
    held,
    (_u, out) => {
      for (let i = 0; i < out.length; i++) out[i] = pop[i]!;
    },
    { users, minUsers: MIN_EVALUABLE_USERS },
  );
  const m: TrainMetrics = {
    ndcgAt10: r.ndcgAt10,
    recallAt20: r.recallAt20,
    coverageAt10: r.coverageAt10,
    popularityNdcgAt10: p.ndcgAt10,
    popularityRecallAt20: p.recallAt20,
    evaluatedUsers: r.evaluatedUsers,
  };
  if (r.note) m.note = r.note;
  return m;
}
