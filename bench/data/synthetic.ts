import { createRng } from "../../src/engine/rng";
import { EventType, type Interactions, type ItemMeta } from "../../src/engine/types";

export interface SyntheticOptions {
  interactions: number;
  nUsers?: number;
  nItems?: number;
  nCategories?: number;
  /** Zipf exponent of item popularity within a category. */
  zipf?: number;
  seed?: number;
  withMeta?: boolean;
}

export interface SyntheticDataset {
  events: Interactions;
  items?: ItemMeta[];
  itemCategory: Int32Array;
}

/** Cumulative Zipf weights over ranks 1..n, normalised to end at 1. */
function zipfCdf(n: number, s: number): Float64Array {
  const cdf = new Float64Array(n);
  let acc = 0;
  for (let r = 0; r < n; r++) {
    acc += 1 / (r + 1) ** s;
    cdf[r] = acc;
  }
  for (let r = 0; r < n; r++) cdf[r]! /= acc;
  return cdf;
}

function sample(cdf: Float64Array, lo: number, hi: number, u: number): number {
  // Binary search over cdf[lo..hi) rescaled to the slice, so one array serves every category.
  const base = lo > 0 ? cdf[lo - 1]! : 0;
  const target = base + u * (cdf[hi - 1]! - base);
  while (lo < hi - 1) {
    const mid = (lo + hi) >> 1;
    if (cdf[mid - 1]! >= target) hi = mid;
    else lo = mid;
  }
  return lo;
}

/**
 * Sessions of views with occasional carts and purchases. Users have 1–3 favourite categories; item
 * popularity is Zipf within each category; user activity is itself skewed. Deterministic for a seed.
 */
export function generateSynthetic(opts: SyntheticOptions): SyntheticDataset {
  const n = opts.interactions;
  const nUsers = opts.nUsers ?? Math.max(100, Math.round(n / 25));
  const nItems = opts.nItems ?? Math.max(200, Math.min(200_000, Math.round(n / 50)));
  const nCat = opts.nCategories ?? Math.max(4, Math.round(Math.sqrt(nItems) / 4));
  const rng = createRng(opts.seed ?? 7);
  // Items are laid out category by category, popular first, so a category is a contiguous index range.
  const catStart = new Int32Array(nCat + 1);
  for (let c = 0; c < nCat; c++) catStart[c + 1] = Math.round(((c + 1) * nItems) / nCat);
  const itemCategory = new Int32Array(nItems);
  for (let c = 0; c < nCat; c++) itemCategory.fill(c, catStart[c]!, catStart[c + 1]!);
  const perCatCdf = new Float64Array(nItems);
  for (let c = 0; c < nCat; c++) {
    const a = catStart[c]!;
    perCatCdf.set(
      zipfCdf(catStart[c + 1]! - a, opts.zipf ?? 1.05).map((v) => v + c),
      a,
    );
  }
  const tastes = new Int32Array(nUsers * 3);
  for (let i = 0; i < tastes.length; i++) tastes[i] = Math.floor(rng() * nCat);
  const userCdf = zipfCdf(nUsers, 0.6);
  const ev = {
    user: new Int32Array(n),
    item: new Int32Array(n),
    type: new Uint8Array(n),
    value: new Float32Array(n).fill(1),
    ts: new Float64Array(n),
    session: new Int32Array(n),
  };
  const t0 = Date.UTC(2024, 0, 1);
  const spanMs = 90 * 86_400_000;
  let e = 0;
  let session = 0;
  while (e < n) {
    const u = sample(userCdf, 0, nUsers, rng());
    const len = 1 + Math.floor(-Math.log(Math.max(rng(), 1e-9)) * 6);
    const ts = t0 + (e / n) * spanMs;
    const cat = rng() < 0.85 ? tastes[u * 3 + Math.floor(rng() * 3)]! : Math.floor(rng() * nCat);
    for (let j = 0; j < len && e < n; j++, e++) {
      const item = sample(perCatCdf, catStart[cat]!, catStart[cat + 1]!, rng());
      const r = rng();
      ev.user[e] = u;
      ev.item[e] = item;
      ev.type[e] = r < 0.03 ? EventType.PURCHASE : r < 0.1 ? EventType.CART : EventType.VIEW;
      ev.ts[e] = ts + j * 30_000;
      ev.session[e] = session;
    }
    session++;
  }
  const events: Interactions = { ...ev, nUsers, nItems };
  const out: SyntheticDataset = { events, itemCategory };
  if (opts.withMeta) {
    out.items = Array.from({ length: nItems }, (_, i) => ({
      name: `item ${i} of category ${itemCategory[i]}`,
      categoryPath: `root/cat${itemCategory[i]! % 7}/cat${itemCategory[i]}`,
      brand: `brand${i % 50}`,
      price: 1 + (i % 100),
    }));
  }
  return out;
}
