/**
 * Scores a per-user signal already has for some items: the ones its HNSW search returned, with the
 * similarity the index computed on the way. When those items are then scored as candidates the score is
 * looked up here instead of recomputed; their vectors are scattered over the whole catalogue (rarely in the
 * CPU cache), so a search in this small sorted list costs a fraction of the dot product it replaces.
 */
import type { Neighbours } from "../../../engine";

/** Positions packed below the item in a sort key (searches return far fewer results than this). */
const POSITIONS = 2 ** 20;

export class KnownScores {
  private items = new Int32Array(0);
  private scores = new Float32Array(0);

  /**
   * Keeps one search's results, each score multiplied by `scale`. Searches of one query only grow wider
   * (and a wider search returns the narrower one's items), so the longest list is kept.
   */
  remember(found: Neighbours, scale = 1): void {
    const n = found.items.length;
    if (n <= this.items.length) return;
    // Sorted by item through one numeric sort of (item, position) packed into a double: no comparator calls.
    const keys = new Float64Array(n);
    for (let j = 0; j < n; j++) keys[j] = found.items[j]! * POSITIONS + j;
    keys.sort();
    const items = new Int32Array(n);
    const scores = new Float32Array(n);
    for (let p = 0; p < n; p++) {
      const j = keys[p]! % POSITIONS;
      items[p] = found.items[j]!;
      scores[p] = found.scores[j]! * scale;
    }
    this.items = items;
    this.scores = scores;
  }

  /** The remembered score of `item`, or NaN when it has none. */
  get(item: number): number {
    const items = this.items;
    let lo = 0;
    let hi = items.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const at = items[mid]!;
      if (at === item) return this.scores[mid]!;
      if (at < item) lo = mid + 1;
      else hi = mid - 1;
    }
    return Number.NaN;
  }
}
