import { type EaseModel, easeScores } from "./ease";
import {
  evaluateRanking,
  type HoldoutSplit,
  hashHoldoutSplit,
  heldOutSets,
  type RankingMetrics,
} from "./evaluate";
import { chooseMinSupport, type FitConfig, fitAlsPart, fitEasePart, fitModel } from "./fit";
import { foldInUser, scoreFactors } from "./fold-in";
import type { BlendWeights } from "./model";
import { blendInto, tunedWeights } from "./ranking/blend";
import { type PersonalComponent, personalComponent } from "./ranking/personal";
import { createRng } from "./rng";
import type { Csr } from "./sparse";
import type { History, Interactions, ItemMeta } from "./types";
import { buildWeightedMatrix, selectEvents } from "./weighting";

export interface SearchOptions {
  seed: number;
  lambdas: number[];
  /** EASE user weightings tried with each λ (see `EaseOptions.userExponent`). */
  userExponents?: number[];
  /** ALS (regularization, alpha) pairs tried when ALS is the primary model. */
  alsGrid: { regularization: number; alpha: number }[];
  /** Use EASE only if at most this support threshold is needed to fit the item budget. */
  maxEaseMinSupport: number;
  maxUsers: number;
  /**
   * Cap on Σ m³ over the EASE fits of the grid (m = EASE items), so the cost depends on the data alone,
   * never on machine speed: results stay reproducible. When the whole grid at m items exceeds it, the grid
   * is tried on the most-supported items only (as many as the budget allows) and the chosen point is fit
   * once at m items.
   */
  lambdaCostBudget: number;
  /** Cap on cached component floats (users × components × items) during the blend search. */
  maxCachedFloats: number;
  /**
   * The split to choose on (training's own hold-out, so the choice is made on as much data as the measured
   * model is fit on); absent: a split of `trainEvents` drawn here.
   */
  split?: HoldoutSplit;
}

/** Relative shortfall of validation NDCG@10 within which a smaller EASE λ is preferred (see searchConfig). */
const LAMBDA_TOLERANCE = 0.01;

export interface SearchTrial {
  what: string;
  ndcgAt10: number;
}

export interface SearchResult {
  config: FitConfig;
  /** The chosen EASE fit on the split's training part (reusable by a caller measuring on that split). */
  ease: EaseModel | null;
  trials: SearchTrial[];
  validationUsers: number;
}

export function userHistory(m: Csr, u: number): History {
  const a = m.indptr[u]!;
  const b = m.indptr[u + 1]!;
  return { items: m.indices.subarray(a, b), weights: m.data.subarray(a, b) };
}

function sampleUsers(held: Map<number, Int32Array>, max: number, seed: number): number[] {
  const users = [...held.keys()].sort((a, b) => a - b);
  if (users.length <= max) return users;
  const rng = createRng(seed);
  for (let i = users.length - 1; i > 0; i--) {
    const j = Math.floor(rng() * (i + 1));
    [users[i], users[j]] = [users[j]!, users[i]!];
  }
  return users.slice(0, max).sort((a, b) => a - b);
}

/** Decides between EASE and ALS for a training matrix under the item budget. */
export function easeFits(matrix: Csr, cfg: FitConfig, maxEaseMinSupport: number): boolean {
  return (
    cfg.ease !== null &&
    chooseMinSupport(matrix, cfg.ease.targetItems, cfg.ease.minSupport).minSupport <= maxEaseMinSupport
  );
}

/**
 * Picks λ (or ALS parameters) and blend weights on a validation split carved from the training events
 * only (the caller's test hold-out never reaches this function).
 */
export function searchConfig(
  trainEvents: Interactions,
  items: readonly (ItemMeta | undefined)[] | undefined,
  base: FitConfig,
  o: SearchOptions,
  onProgress?: (fraction: number) => void,
): SearchResult {
  const split = o.split ?? hashHoldoutSplit(trainEvents, { seed: o.seed + 1 });
  const valEvents = selectEvents(trainEvents, split.trainIdx);
  const matrix = buildWeightedMatrix(valEvents, base.weights);
  const held = heldOutSets(trainEvents, split, matrix);
  const trials: SearchTrial[] = [];
  if (held.size < 10) return { config: base, ease: null, trials, validationUsers: held.size };
  const useEase = easeFits(matrix, base, o.maxEaseMinSupport);
  let users = sampleUsers(held, o.maxUsers, o.seed + 2);
  const evalUsers = (scorer: (u: number, out: Float32Array) => void): RankingMetrics =>
    evaluateRanking(matrix, held, scorer, { users });
  let config: FitConfig = { ...base, ease: useEase ? base.ease : null };
  // 1. Primary collaborative model alone.
  let best = -1;
  let bestEase: EaseModel | null = null;
  if (useEase && base.ease) {
    const full = base.ease;
    const m = chooseMinSupport(matrix, full.targetItems, full.minSupport).items;
    const exponents = o.userExponents ?? [full.userExponent ?? 0];
    config = { ...config, ease: full };
    // λ first, with the first user weighting; then the other weightings at the chosen λ only. The two barely
    // interact (λ shrinks every pair alike, the weighting moves mass between users), so the coordinate search
    // finds the grid's best point in |λ| + |weightings| − 1 fits instead of their product.
    const fitCount = o.lambdas.length + exponents.length - 1;
    // The search on a subsample of the catalogue when it is too large to fit whole that many times: λ and the
    // user weighting are properties of the data's density, which its best-supported items share (measured on
    // a 9.7k-item film set: EASE on its 2k most-supported items ranks the grid points as the full fit does).
    const sampled = Math.min(m, Math.floor(Math.cbrt(o.lambdaCostBudget / fitCount)));
    const w = new Float32Array(matrix.nCols).fill(1);
    let done = 0;
    const score = (point: { lambda: number; userExponent: number }) => {
      const ease = fitEasePart(matrix, {
        ...config,
        ease: { ...full, ...point, targetItems: Math.min(full.targetItems, sampled) },
      })!;
      const r = evalUsers((u, out) => {
        const h = userHistory(matrix, u);
        easeScores(ease, h.items, w, out);
      });
      const what = `ease lambda=${point.lambda} userExponent=${point.userExponent}`;
      trials.push({ what: sampled < m ? `${what} (${sampled} items)` : what, ndcgAt10: r.ndcgAt10 ?? 0 });
      onProgress?.((0.45 * ++done) / fitCount);
      return { ...point, score: r.ndcgAt10 ?? 0 };
    };
    const lambdaFits = o.lambdas.map((lambda) => score({ lambda, userExponent: exponents[0]! }));
    // The served model is refit on every event, and its users' histories are whole where the validation
    // users lost a fifth of theirs: with more evidence per user, less shrinkage serves better. So among the
    // points within LAMBDA_TOLERANCE of the best validation figure (a gap that size is within the split's
    // noise) the smallest λ is taken, the better figure among equal λ.
    const top = Math.max(...lambdaFits.map((f) => f.score));
    let chosen = lambdaFits
      .filter((f) => f.score >= top * (1 - LAMBDA_TOLERANCE))
      .sort((a, b) => a.lambda - b.lambda || b.score - a.score)[0]!;
    for (const userExponent of exponents.slice(1)) {
      const fit = score({ lambda: chosen.lambda, userExponent });
      if (fit.score > chosen.score) chosen = fit;
    }
    config = { ...config, ease: { ...full, lambda: chosen.lambda, userExponent: chosen.userExponent } };
    // Refit once at the chosen point (keeping every fit of the grid would hold |grid| dense m×m models).
    bestEase = fitEasePart(matrix, config)!;
    best = chosen.score;
    onProgress?.(0.5);
  } else {
    for (const [i, g] of o.alsGrid.entries()) {
      const cfg: FitConfig = { ...config, als: { ...base.als, ...g } };
      // Shorter fits rank the grid points the same way at a fraction of the cost.
      const basis = fitAlsPart(matrix, {
        ...cfg,
        als: { ...cfg.als, iterations: Math.min(cfg.als.iterations, 8) },
      });
      const x = new Float32Array(basis.k);
      const r = evalUsers((u, out) =>
        scoreFactors(foldInUser(basis, userHistory(matrix, u), x), basis.itemFactors, basis.k, out),
      );
      trials.push({ what: `als reg=${g.regularization} alpha=${g.alpha}`, ndcgAt10: r.ndcgAt10 ?? 0 });
      if ((r.ndcgAt10 ?? 0) > best) {
        best = r.ndcgAt10 ?? 0;
        config = cfg;
      }
      onProgress?.((0.5 * (i + 1)) / o.alsGrid.length);
    }
  }
  // 2. Blend weights by coordinate ascent, each candidate blend scored as the ranker serves it (the
  // components scaled over the answerable items, see ranking/blend.ts), from cached component scores.
  const model = fitModel(valEvents, items, config, {
    needAls: false,
    withCooccurrence: false,
    ease: bestEase,
  }).model;
  const comps: PersonalComponent[] = ["collab", ...(model.content ? (["content"] as const) : []), "trend"];
  const maxUsers = Math.max(10, Math.floor(o.maxCachedFloats / (comps.length * matrix.nCols)));
  if (users.length > maxUsers) users = users.slice(0, maxUsers);
  const cache = new Map<number, Partial<Record<PersonalComponent, Float32Array>>>();
  for (const u of users) {
    const h = userHistory(matrix, u);
    const parts: Partial<Record<PersonalComponent, Float32Array>> = {};
    for (const c of comps) {
      const v = new Float32Array(matrix.nCols);
      if (personalComponent(model, h, c, v)) parts[c] = v;
    }
    cache.set(u, parts);
  }
  const blendScore = (bw: BlendWeights): number => {
    const weights = tunedWeights(bw);
    return evalUsers((u, out) => blendInto(out, weights, cache.get(u)!)).ndcgAt10 ?? 0;
  };
  let blend: BlendWeights = { cf: 1, als: 0, content: 0, popularity: 0 };
  let blendBest = blendScore(blend);
  const grid: Record<PersonalComponent, [keyof BlendWeights, number[]]> = {
    collab: ["cf", [1]],
    content: ["content", [0, 0.02, 0.05, 0.1, 0.2, 0.4, 0.8, 1.5, 3]],
    trend: ["popularity", [0, 0.02, 0.05, 0.1, 0.2, 0.4, 0.8]],
  };
  for (let round = 0; round < 2; round++) {
    for (const c of comps) {
      const [key, values] = grid[c];
      for (const v of values) {
        if (v === blend[key]) continue;
        const candidate = { ...blend, [key]: v };
        const s = blendScore(candidate);
        if (s > blendBest + 1e-6) {
          blendBest = s;
          blend = candidate;
        }
      }
    }
    onProgress?.(0.75 + (0.25 * (round + 1)) / 2);
  }
  trials.push({ what: `blend ${JSON.stringify(blend)}`, ndcgAt10: blendBest });
  return { config: { ...config, blend }, ease: bestEase, trials, validationUsers: users.length };
}
