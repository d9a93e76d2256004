/**
 * A set of catalogue item indices held as one sorted, distinct Int32Array: 4 bytes an item, where a
 * `Set<number>` costs several times that, and a lookup is a binary search. What a user's whole history
 * excludes from their answers is one of these, memoised with the history.
 */
export interface ItemSet extends Iterable<number> {
  has(item: number): boolean;
  readonly size: number;
}

export class SortedItems implements ItemSet {
  private constructor(private readonly items: Int32Array) {}

  /** The distinct values given, in any order. */
  static of(values: ArrayLike<number> | Iterable<number>): SortedItems {
    const all = Int32Array.from(values as ArrayLike<number>).sort();
    let n = 0;
    for (let j = 0; j < all.length; j++) if (j === 0 || all[j] !== all[j - 1]) all[n++] = all[j]!;
    return new SortedItems(n === all.length ? all : all.slice(0, n));
  }

  get size(): number {
    return this.items.length;
  }

  has(item: number): boolean {
    const a = this.items;
    let lo = 0;
    let hi = a.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const v = a[mid]!;
      if (v === item) return true;
      if (v < item) lo = mid + 1;
      else hi = mid - 1;
    }
    return false;
  }

  [Symbol.iterator](): Iterator<number> {
    return this.items[Symbol.iterator]();
  }
}
