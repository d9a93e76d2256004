import { buildCsr, type Csr } from "./sparse";
import { topK } from "./topk";
import { EventType, type Interactions } from "./types";

export interface CooccurrenceOptions {
  /** Neighbours kept per item. */
  topN: number;
  /** Events of one user closer than this (and in the same session when sessions are known) form a basket. */
  windowHours: number;
  /** Weights per event type; views default low so sparse carts still get neighbours without drowning them. */
  purchaseWeight: number;
  cartWeight: number;
  viewWeight: number;
  /** Distinct items considered per basket (most recent kept), which bounds the pair count. */
  maxBasket: number;
}

export const DEFAULT_COOCCURRENCE: Readonly<CooccurrenceOptions> = Object.freeze({
  topN: 20,
  windowHours: 24,
  purchaseWeight: 1,
  cartWeight: 1,
  viewWeight: 0.1,
  maxBasket: 20,
});

/**
 * Item→item "bought together" lists: pair weights summed over baskets, normalised by the geometric mean of
 * both items' basket mass (cosine-like, so best-sellers do not top every list), top N per item.
 */
export function buildCooccurrence(events: Interactions, options: Partial<CooccurrenceOptions> = {}): Csr {
  const o = { ...DEFAULT_COOCCURRENCE, ...options };
  const n = events.user.length;
  const typeWeight = (t: number) =>
    t === EventType.PURCHASE
      ? o.purchaseWeight
      : t === EventType.CART
        ? o.cartWeight
        : t === EventType.LIKE
          ? o.cartWeight
          : t === EventType.DISLIKE
            ? 0
            : o.viewWeight;
  const picked: number[] = [];
  for (let i = 0; i < n; i++) if (typeWeight(events.type[i]!) > 0) picked.push(i);
  // Baskets are runs of one user's events in time order.
  picked.sort((a, b) => events.user[a]! - events.user[b]! || events.ts[a]! - events.ts[b]!);
  const windowMs = o.windowHours * 3_600_000;
  const rows: number[] = [];
  const cols: number[] = [];
  const vals: number[] = [];
  const mass = new Float64Array(events.nItems);
  const basketW = new Map<number, number>();
  const flush = () => {
    const items = [...basketW.keys()].slice(-o.maxBasket);
    for (const a of items) {
      const wa = basketW.get(a)!;
      mass[a]! += wa;
      for (const b of items) {
        if (a === b) continue;
        rows.push(a);
        cols.push(b);
        vals.push(Math.min(wa, basketW.get(b)!));
      }
    }
    basketW.clear();
  };
  let prev = -1;
  for (const e of picked) {
    if (prev >= 0) {
      const sameUser = events.user[e] === events.user[prev];
      const sameSession =
        !events.session || events.session[e] === events.session[prev] || events.session[e]! < 0;
      if (!sameUser || !sameSession || events.ts[e]! - events.ts[prev]! > windowMs) flush();
    }
    const it = events.item[e]!;
    const w = typeWeight(events.type[e]!);
    basketW.set(it, Math.max(basketW.get(it) ?? 0, w));
    prev = e;
  }
  flush();
  const pairs = buildCsr(
    Int32Array.from(rows),
    Int32Array.from(cols),
    Float32Array.from(vals),
    events.nItems,
    events.nItems,
  );
  const indptr = new Int32Array(events.nItems + 1);
  const outIdx: number[] = [];
  const outVal: number[] = [];
  for (let a = 0; a < events.nItems; a++) {
    const p0 = pairs.indptr[a]!;
    const p1 = pairs.indptr[a + 1]!;
    const local = new Float32Array(p1 - p0);
    for (let p = p0; p < p1; p++)
      local[p - p0] = pairs.data[p]! / Math.sqrt(mass[a]! * mass[pairs.indices[p]!]!);
    const top = topK(local, o.topN);
    for (let t = 0; t < top.length; t++) {
      outIdx.push(pairs.indices[p0 + top[t]!]!);
      outVal.push(local[top[t]!]!);
    }
    indptr[a + 1] = outIdx.length;
  }
  return {
    nRows: events.nItems,
    nCols: events.nItems,
    indptr,
    indices: Int32Array.from(outIdx),
    data: Float32Array.from(outVal),
  };
}
