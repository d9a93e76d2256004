/**
 * Scores gathered from sparse neighbour lists (a product's similar or complementary items, one list per
 * anchor): each item's scores summed, and the anchor that gave it its best one. Kept in typed arrays, an
 * open-addressing table keyed by item, rather than Maps: a product page sums a few hundred entries and then
 * looks up every candidate, and three Maps of boxed numbers were the largest part of that ranking.
 */
export class SparseScores {
  /** item + 1 per slot (0: empty). */
  private readonly keys: Int32Array;
  private readonly sums: Float64Array;
  private readonly best: Float64Array;
  private readonly anchors: Int32Array;
  /** The items in the order they were first met. */
  private readonly order: Int32Array;
  private readonly mask: number;
  private count = 0;

  /** Room for `capacity` distinct items. */
  constructor(capacity: number) {
    let slots = 8;
    while (slots < 2 * capacity) slots *= 2;
    this.keys = new Int32Array(slots);
    this.sums = new Float64Array(slots);
    this.best = new Float64Array(slots);
    this.anchors = new Int32Array(slots);
    this.order = new Int32Array(Math.max(capacity, 0));
    this.mask = slots - 1;
  }

  /** Adds an anchor's positive score for the item. */
  add(item: number, score: number, anchor: number): void {
    const slot = this.slotOf(item);
    if (this.keys[slot] === 0) {
      this.keys[slot] = item + 1;
      this.order[this.count++] = item;
    }
    // Several anchors pointing at one item add up: "bought with two things in your cart" beats one.
    this.sums[slot]! += score;
    if (score > this.best[slot]!) {
      this.best[slot] = score;
      this.anchors[slot] = anchor;
    }
  }

  get size(): number {
    return this.count;
  }

  /** The item's summed score; 0 when no list has it. */
  score(item: number): number {
    const slot = this.slotOf(item);
    return this.keys[slot] === 0 ? 0 : this.sums[slot]!;
  }

  /** The anchor of the item's best score; -1 when no list has it. */
  anchor(item: number): number {
    const slot = this.slotOf(item);
    return this.keys[slot] === 0 ? -1 : this.anchors[slot]!;
  }

  /** Every item with a score, in the order first met. */
  items(): Int32Array {
    return this.order.subarray(0, this.count);
  }

  /** The item's slot, or the empty one where it would go. */
  private slotOf(item: number): number {
    const key = item + 1;
    let slot = Math.imul(key, 0x9e3779b1) & this.mask;
    for (;;) {
      const at = this.keys[slot]!;
      if (at === key || at === 0) return slot;
      slot = (slot + 1) & this.mask;
    }
  }
}

/** Sparse neighbour lists (per anchor) summed per item, remembering the best anchor per item. */
export function fromNeighbours(
  anchors: readonly number[],
  neighbours: (anchor: number) => { items: Int32Array; scores: Float32Array },
): SparseScores | null {
  const lists = anchors.map(neighbours);
  let entries = 0;
  for (const list of lists) entries += list.items.length;
  const sparse = new SparseScores(entries);
  for (let a = 0; a < lists.length; a++) {
    const { items, scores } = lists[a]!;
    for (let j = 0; j < items.length; j++) {
      const s = scores[j]!;
      if (s > 0) sparse.add(items[j]!, s, anchors[a]!);
    }
  }
  return sparse.size > 0 ? sparse : null;
}
