/**
 * Indices of the k highest scores, best first, via a size-k min-heap: O(n log k), no full sort.
 * `exclude` lists indices that must not be returned (e.g. items the user already has); `predicate`
 * is a per-item filter. NaN and -Infinity scores are never returned.
 */
export function topK(
  scores: Float32Array | Float64Array,
  k: number,
  predicate?: ((item: number) => boolean) | null,
  exclude?: Int32Array | null,
): Int32Array {
  const n = scores.length;
  if (k <= 0 || n === 0) return new Int32Array(0);
  let saved: Float64Array | null = null;
  if (exclude && exclude.length > 0) {
    // Mask by temporarily overwriting scores rather than building a Set on the hot path; restored below.
    saved = new Float64Array(exclude.length);
    for (let j = 0; j < exclude.length; j++) {
      const e = exclude[j]!;
      if (e < 0 || e >= n) continue;
      saved[j] = scores[e]!;
      scores[e] = Number.NEGATIVE_INFINITY;
    }
  }
  const heapIdx = new Int32Array(k);
  const heapVal = new Float64Array(k);
  let size = 0;
  for (let i = 0; i < n; i++) {
    const s = scores[i]!;
    if (!(s > Number.NEGATIVE_INFINITY)) continue;
    if (size === k && s <= heapVal[0]!) continue;
    if (predicate && !predicate(i)) continue;
    if (size < k) {
      siftUp(heapIdx, heapVal, size, i, s);
      size++;
    } else {
      siftDown(heapIdx, heapVal, size, i, s);
    }
  }
  if (saved && exclude) {
    for (let j = 0; j < exclude.length; j++) {
      const e = exclude[j]!;
      if (e >= 0 && e < n) scores[e] = saved[j]!;
    }
  }
  // Pop the min repeatedly, filling the output from the back so the best comes first.
  const out = new Int32Array(size);
  for (let end = size; end > 0; end--) {
    out[end - 1] = heapIdx[0]!;
    const lastI = heapIdx[end - 1]!;
    const lastV = heapVal[end - 1]!;
    siftDown(heapIdx, heapVal, end - 1, lastI, lastV);
  }
  return out;
}

// Ties on score break towards the lower index so results are deterministic.
function less(va: number, ia: number, vb: number, ib: number): boolean {
  return va < vb || (va === vb && ia > ib);
}

function siftUp(hi: Int32Array, hv: Float64Array, pos: number, idx: number, val: number): void {
  while (pos > 0) {
    const parent = (pos - 1) >> 1;
    if (!less(val, idx, hv[parent]!, hi[parent]!)) break;
    hi[pos] = hi[parent]!;
    hv[pos] = hv[parent]!;
    pos = parent;
  }
  hi[pos] = idx;
  hv[pos] = val;
}

/** Replaces the root with (idx, val) and restores the heap over the first `size` slots. */
function siftDown(hi: Int32Array, hv: Float64Array, size: number, idx: number, val: number): void {
  if (size === 0) return;
  let pos = 0;
  for (;;) {
    const l = 2 * pos + 1;
    if (l >= size) break;
    const r = l + 1;
    let c = l;
    if (r < size && less(hv[r]!, hi[r]!, hv[l]!, hi[l]!)) c = r;
    if (!less(hv[c]!, hi[c]!, val, idx)) break;
    hi[pos] = hi[c]!;
    hv[pos] = hv[c]!;
    pos = c;
  }
  hi[pos] = idx;
  hv[pos] = val;
}
