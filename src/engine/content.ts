import { normaliseCategoryPath } from "./categories";
import type { ItemMeta } from "./types";

export interface ContentOptions {
  dims: number;
  /** Relative weight of each field's tokens before IDF. */
  fieldWeights: {
    name: number;
    description: number;
    category: number;
    brand: number;
    attributes: number;
    price: number;
  };
}

export const DEFAULT_CONTENT: Readonly<ContentOptions> = Object.freeze({
  dims: 256,
  fieldWeights: Object.freeze({
    name: 1,
    description: 0.5,
    category: 2,
    brand: 1.5,
    attributes: 1,
    price: 0.5,
  }),
});

/** FNV-1a; the top bit picks a sign so collisions cancel on average instead of piling up (signed hashing). */
function hash32(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

function words(text: string): string[] {
  return text
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((w) => w.length > 1);
}

/** Log-scale bucket so "similar price" means within roughly ±20%. */
function logBucket(x: number): number {
  return Math.round(Math.log(Math.max(x, 1e-6)) / Math.log(1.4));
}

/** Weighted tokens of one item; category paths contribute one token per ancestor so siblings share mass. */
export function itemTokens(meta: ItemMeta, w: ContentOptions["fieldWeights"]): Map<string, number> {
  const t = new Map<string, number>();
  const add = (tok: string, weight: number) => t.set(tok, (t.get(tok) ?? 0) + weight);
  if (meta.name) for (const x of words(meta.name)) add(`n:${x}`, w.name);
  if (meta.description) for (const x of words(meta.description)) add(`d:${x}`, w.description);
  if (meta.categoryPath) {
    let path = "";
    for (const part of normaliseCategoryPath(meta.categoryPath)) {
      path = path ? `${path}/${part}` : part;
      add(`c:${path}`, w.category);
    }
  }
  if (meta.brand) add(`b:${meta.brand.toLowerCase()}`, w.brand);
  if (meta.price !== undefined && meta.price > 0) add(`p:${logBucket(meta.price)}`, w.price);
  if (meta.attributes) {
    for (const [k, v] of Object.entries(meta.attributes)) {
      const key = k.toLowerCase();
      if (typeof v === "number") add(`a:${key}~${logBucket(Math.abs(v))}`, w.attributes);
      else if (typeof v === "boolean") {
        if (v) add(`a:${key}`, w.attributes);
      } else for (const x of words(v)) add(`a:${key}=${x}`, w.attributes);
    }
  }
  return t;
}

/**
 * Hashed TF-IDF vectors (nItems × dims, L2-normalised; zero rows for items without metadata).
 * IDF is computed over this catalogue so ubiquitous tokens (a root category, say) carry little weight.
 */
export function buildContentVectors(
  items: readonly (ItemMeta | undefined)[] | undefined,
  nItems: number,
  options: Partial<ContentOptions> = {},
): Float32Array {
  const o = { ...DEFAULT_CONTENT, ...options };
  const dims = o.dims;
  const out = new Float32Array(nItems * dims);
  if (!items) return out;
  const tokens: (Map<string, number> | null)[] = [];
  const df = new Map<string, number>();
  let nDocs = 0;
  for (let i = 0; i < nItems; i++) {
    const meta = items[i];
    const t = meta ? itemTokens(meta, o.fieldWeights) : null;
    tokens.push(t);
    if (!t || t.size === 0) continue;
    nDocs++;
    for (const k of t.keys()) df.set(k, (df.get(k) ?? 0) + 1);
  }
  for (let i = 0; i < nItems; i++) {
    const t = tokens[i];
    if (!t) continue;
    const base = i * dims;
    for (const [tok, tf] of t) {
      const idf = Math.log((1 + nDocs) / (1 + df.get(tok)!)) + 1;
      const h = hash32(tok);
      out[base + (h % dims)]! += (h & 0x80000000 ? -1 : 1) * (1 + Math.log(tf)) * idf;
    }
    let norm = 0;
    for (let d = 0; d < dims; d++) norm += out[base + d]! * out[base + d]!;
    if (norm > 0) {
      const inv = 1 / Math.sqrt(norm);
      for (let d = 0; d < dims; d++) out[base + d]! *= inv;
    }
  }
  return out;
}
