/**
 * Maximal marginal relevance: re-orders the best-scored candidates so a page does not repeat one category or
 * one taste (the `diverse` model variant). Works on candidate positions.
 */
import type { RankCatalogue } from "./catalogue";
import type { ModelSignals } from "./signals";

const MMR_LAMBDA = 0.7;
const MMR_MAX_POSITIONS = 300;

/** Maximal marginal relevance over categories and taste factors. */
export function mmr(
  pool: Int32Array,
  score: Float32Array,
  candidates: Int32Array,
  table: Pick<RankCatalogue, "categories">,
  signals: Pick<ModelSignals, "itemSimilarity"> | null,
  want: number,
): Int32Array {
  const positions = Math.min(want, MMR_MAX_POSITIONS, pool.length);
  if (pool.length === 0) return pool;
  const top = score[pool[0]!]!;
  const bottom = score[pool[pool.length - 1]!]!;
  const span = top - bottom > 0 ? top - bottom : 1;
  const remaining = Array.from(pool);
  const chosen: number[] = [];
  const maxSim = new Float32Array(remaining.length);
  while (chosen.length < positions && remaining.length > 0) {
    let best = 0;
    let bestValue = Number.NEGATIVE_INFINITY;
    for (let r = 0; r < remaining.length; r++) {
      const relevance = (score[remaining[r]!]! - bottom) / span;
      const value = MMR_LAMBDA * relevance - (1 - MMR_LAMBDA) * maxSim[r]!;
      if (value > bestValue) {
        bestValue = value;
        best = r;
      }
    }
    const pick = remaining[best]!;
    chosen.push(pick);
    remaining.splice(best, 1);
    maxSim.copyWithin(best, best + 1);
    for (let r = 0; r < remaining.length; r++) {
      const sim = similarity(table, signals, candidates[pick]!, candidates[remaining[r]!]!);
      if (sim > maxSim[r]!) maxSim[r] = sim;
    }
  }
  const rest = pool.filter((p) => !chosen.includes(p));
  return Int32Array.from([...chosen, ...rest].slice(0, want));
}

function similarity(
  table: Pick<RankCatalogue, "categories">,
  signals: Pick<ModelSignals, "itemSimilarity"> | null,
  a: number,
  b: number,
): number {
  const ca = table.categories[a]!;
  const cb = table.categories[b]!;
  let category = 0;
  if (ca === cb) category = 1;
  else if (ca.split("/")[0] === cb.split("/")[0]) category = 0.5;
  const taste = signals?.itemSimilarity(a, b) ?? null;
  return taste === null ? category : 0.5 * category + 0.5 * Math.max(0, taste);
}
