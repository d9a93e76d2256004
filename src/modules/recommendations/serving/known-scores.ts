/**
 * Scores a per-user signal already has for some items: the ones its HNSW search returned, with the
 * similarity the index computed on the way. When those items are then scored as candidates the score is
 * looked up here instead of recomputed; their vectors are scattered over the whole catalogue (rarely in the
 * CPU cache), so a lookup in this small hash table costs a fraction of the dot product it replaces.
 */
import type { Neighbours } from "../../../engine";

export class KnownScores {
  /**
   * An open-addressing table of the remembered items: slot keys are item + 1 (0 marks an empty slot), found
   * by Fibonacci hashing and linear probing. The table is at most three quarters full, which keeps probes to
   * one or two and the table at 11–21 bytes an item (a sorted list took 8).
   */
  private keys = new Int32Array(0);
  private scores = new Float32Array(0);
  private count = 0;
  private shift = 32;

  /**
   * Keeps one search's results, each score multiplied by `scale`. Searches of one query only grow wider
   * (and a wider search returns the narrower one's items), so the longest list is kept.
   */
  remember(found: Neighbours, scale = 1): void {
    const n = found.items.length;
    if (n <= this.count) return;
    let bits = 4;
    while (3 * (1 << bits) < 4 * n) bits++;
    const size = 1 << bits;
    const mask = size - 1;
    const shift = 32 - bits;
    const keys = new Int32Array(size);
    const scores = new Float32Array(size);
    for (let j = 0; j < n; j++) {
      const key = found.items[j]! + 1;
      let slot = Math.imul(key, 0x9e3779b1) >>> shift;
      while (keys[slot] !== 0 && keys[slot] !== key) slot = (slot + 1) & mask;
      keys[slot] = key;
      scores[slot] = found.scores[j]! * scale;
    }
    this.keys = keys;
    this.scores = scores;
    this.count = n;
    this.shift = shift;
  }

  /** The remembered score of `item`, or NaN when it has none. */
  get(item: number): number {
    const keys = this.keys;
    if (this.count === 0 || item < 0) return Number.NaN;
    const key = item + 1;
    const mask = keys.length - 1;
    let slot = Math.imul(key, 0x9e3779b1) >>> this.shift;
    for (;;) {
      const at = keys[slot]!;
      if (at === key) return this.scores[slot]!;
      if (at === 0) return Number.NaN;
      slot = (slot + 1) & mask;
    }
  }
}
