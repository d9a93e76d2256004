import type { Model } from "./model";

/**
 * Similarity used for diversity: half category overlap (1 same leaf, 0.5 same parent) and half the cosine
 * of ALS item factors (clipped at 0), so two phones of the same line count as near-duplicates.
 */
export function itemSimilarity(model: Model, a: number, b: number): number {
  const cat = model.categories;
  const ca = cat.itemCategory[a] ?? -1;
  const cb = cat.itemCategory[b] ?? -1;
  let catSim = 0;
  if (ca >= 0 && cb >= 0) {
    if (ca === cb) catSim = 1;
    else if (cat.parent[ca] !== -1 && cat.parent[ca] === cat.parent[cb]) catSim = 0.5;
  }
  const als = model.als;
  if (!als) return catSim;
  const k = als.k;
  const f = als.itemFactors;
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let t = 0; t < k; t++) {
    const x = f[a * k + t]!;
    const y = f[b * k + t]!;
    dot += x * y;
    na += x * x;
    nb += y * y;
  }
  const cos = na > 0 && nb > 0 ? dot / Math.sqrt(na * nb) : 0;
  return 0.5 * catSim + 0.5 * Math.max(0, cos);
}

/**
 * Maximal marginal relevance (Carbonell & Goldstein 1998): repeatedly takes the candidate maximising
 * λ·relevance − (1−λ)·max similarity to what is already picked. Relevance is min-max scaled first so λ
 * means the same whatever the score range. O(k · candidates).
 */
export function mmrRerank(
  model: Model,
  candidates: Int32Array,
  scores: Float32Array,
  k: number,
  lambda = 0.7,
): Int32Array {
  const n = candidates.length;
  const take = Math.min(k, n);
  let lo = Number.POSITIVE_INFINITY;
  let hi = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < n; i++) {
    lo = Math.min(lo, scores[i]!);
    hi = Math.max(hi, scores[i]!);
  }
  const span = hi > lo ? hi - lo : 1;
  const maxSim = new Float32Array(n);
  const used = new Uint8Array(n);
  const out = new Int32Array(take);
  for (let r = 0; r < take; r++) {
    let best = -1;
    let bestVal = Number.NEGATIVE_INFINITY;
    for (let i = 0; i < n; i++) {
      if (used[i]) continue;
      const v = lambda * ((scores[i]! - lo) / span) - (1 - lambda) * maxSim[i]!;
      if (v > bestVal) {
        bestVal = v;
        best = i;
      }
    }
    used[best] = 1;
    out[r] = candidates[best]!;
    for (let i = 0; i < n; i++) {
      if (used[i]) continue;
      const s = itemSimilarity(model, candidates[best]!, candidates[i]!);
      if (s > maxSim[i]!) maxSim[i] = s;
    }
  }
  return out;
}
