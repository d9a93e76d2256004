import type { ItemMeta } from "./types";

/** Category tree flattened from items' slash-separated paths; every ancestor is a category of its own. */
export interface CategoryIndex {
  /** Full path per category id, e.g. "electronics/phones". */
  paths: string[];
  /** Parent category id, -1 for roots. */
  parent: Int32Array;
  /** Leaf category id per item, -1 when the item has none. */
  itemCategory: Int32Array;
}

export function normaliseCategoryPath(path: string): string[] {
  return path
    .split(/[/>.]/)
    .map((p) => p.trim().toLowerCase())
    .filter((p) => p.length > 0);
}

export function buildCategoryIndex(
  items: readonly (ItemMeta | undefined)[] | undefined,
  nItems: number,
): CategoryIndex {
  const ids = new Map<string, number>();
  const paths: string[] = [];
  const parents: number[] = [];
  const itemCategory = new Int32Array(nItems).fill(-1);
  for (let i = 0; i < nItems; i++) {
    const raw = items?.[i]?.categoryPath;
    if (!raw) continue;
    const parts = normaliseCategoryPath(raw);
    let parent = -1;
    let path = "";
    for (const part of parts) {
      path = path ? `${path}/${part}` : part;
      let id = ids.get(path);
      if (id === undefined) {
        id = paths.length;
        ids.set(path, id);
        paths.push(path);
        parents.push(parent);
      }
      parent = id;
    }
    itemCategory[i] = parent;
  }
  return { paths, parent: Int32Array.from(parents), itemCategory };
}

/** Category ids from the item's leaf up to its root (leaf first). */
export function categoryAncestors(index: CategoryIndex, category: number, out: number[] = []): number[] {
  out.length = 0;
  for (let c = category; c >= 0; c = index.parent[c]!) out.push(c);
  return out;
}

export function findCategory(index: CategoryIndex, path: string): number {
  const key = normaliseCategoryPath(path).join("/");
  return index.paths.indexOf(key);
}
