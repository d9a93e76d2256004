import { normaliseCategoryPath } from "./categories";
import type { AnnRows } from "./hnsw";
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
 * Hashed TF-IDF vectors of a catalogue, n rows of `dims`, each L2-normalised (zero for items without
 * metadata), kept by their non-zeros: an item has a handful of tokens (about 10 of 256 dimensions set for
 * product names), so the rows take a twentieth of the dense matrix's memory. Row `i`'s non-zeros are
 * `indices[indptr[i]..indptr[i + 1]]` (ascending) with their values in `data`.
 */
export interface ContentVectors {
  dims: number;
  indptr: Int32Array;
  indices: Uint16Array;
  data: Float32Array;
}

/** Dimensions a row's indices can address. */
export const MAX_CONTENT_DIMS = 65_536;

/**
 * Hashed TF-IDF vectors (zero rows for items without metadata). IDF is computed over this catalogue so
 * ubiquitous tokens (a root category, say) carry little weight.
 */
export function buildContentVectors(
  items: readonly (ItemMeta | undefined)[] | undefined,
  nItems: number,
  options: Partial<ContentOptions> = {},
): ContentVectors {
  const o = { ...DEFAULT_CONTENT, ...options };
  const dims = o.dims;
  if (!Number.isInteger(dims) || dims < 1 || dims > MAX_CONTENT_DIMS) {
    throw new RangeError(`content dimensions must be an integer from 1 to ${MAX_CONTENT_DIMS}, not ${dims}`);
  }
  const indptr = new Int32Array(nItems + 1);
  if (!items) return { dims, indptr, indices: new Uint16Array(0), data: new Float32Array(0) };
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
  // One dense row of scratch; the non-zeros of each row are appended to growing arrays.
  const row = new Float32Array(dims);
  let indices = new Uint16Array(Math.max(16, nItems * 12));
  let data = new Float32Array(indices.length);
  let nnz = 0;
  for (let i = 0; i < nItems; i++) {
    const t = tokens[i];
    if (t) {
      row.fill(0);
      for (const [tok, tf] of t) {
        const idf = Math.log((1 + nDocs) / (1 + df.get(tok)!)) + 1;
        const h = hash32(tok);
        row[h % dims]! += (h & 0x80000000 ? -1 : 1) * (1 + Math.log(tf)) * idf;
      }
      let norm = 0;
      for (let d = 0; d < dims; d++) norm += row[d]! * row[d]!;
      const inv = norm > 0 ? 1 / Math.sqrt(norm) : 0;
      if (nnz + dims > indices.length) {
        const size = Math.max(2 * indices.length, nnz + dims);
        const grownIndices = new Uint16Array(size);
        grownIndices.set(indices.subarray(0, nnz));
        const grownData = new Float32Array(size);
        grownData.set(data.subarray(0, nnz));
        indices = grownIndices;
        data = grownData;
      }
      for (let d = 0; d < dims; d++) {
        if (row[d] === 0) continue;
        indices[nnz] = d;
        data[nnz++] = row[d]! * inv;
      }
    }
    indptr[i + 1] = nnz;
  }
  return { dims, indptr, indices: indices.slice(0, nnz), data: data.slice(0, nnz) };
}

/** `into += weight × row(item)`: a user's content profile is the weighted sum of their items' rows. */
export function addContentRow(c: ContentVectors, item: number, weight: number, into: Float32Array): void {
  const { indptr, indices, data } = c;
  for (let p = indptr[item]!; p < indptr[item + 1]!; p++) into[indices[p]!]! += weight * data[p]!;
}

/** `row(item) · dense`, over the row's non-zeros. */
export function contentDot(c: ContentVectors, item: number, dense: Float32Array): number {
  const { indptr, indices, data } = c;
  let sum = 0;
  for (let p = indptr[item]!; p < indptr[item + 1]!; p++) sum += data[p]! * dense[indices[p]!]!;
  return sum;
}

/** `row(a) · row(b)`: the two items' cosine (rows are unit length or zero). Both rows' indices ascend. */
export function contentRowsDot(c: ContentVectors, a: number, b: number): number {
  const { indptr, indices, data } = c;
  let p = indptr[a]!;
  let q = indptr[b]!;
  const pEnd = indptr[a + 1]!;
  const qEnd = indptr[b + 1]!;
  let sum = 0;
  while (p < pEnd && q < qEnd) {
    const x = indices[p]!;
    const y = indices[q]!;
    if (x === y) sum += data[p++]! * data[q++]!;
    else if (x < y) p++;
    else q++;
  }
  return sum;
}

/** Row `item` written whole into `into` (length `dims`). */
export function contentRow(c: ContentVectors, item: number, into: Float32Array): Float32Array {
  into.fill(0);
  addContentRow(c, item, 1, into);
  return into;
}

/** The rows as an HNSW index reads them (see `AnnRows`). */
export function contentAnnRows(c: ContentVectors): AnnRows {
  return { n: c.indptr.length - 1, dims: c.dims, row: (item, into) => contentRow(c, item, into) };
}

/** Rows of non-zeros from one dense row-major matrix, the form in which earlier models stored them. */
export function contentFromDense(vectors: Float32Array, dims: number): ContentVectors {
  const n = Math.floor(vectors.length / dims);
  const indptr = new Int32Array(n + 1);
  let nnz = 0;
  for (let i = 0; i < n * dims; i++) if (vectors[i] !== 0) nnz++;
  const indices = new Uint16Array(nnz);
  const data = new Float32Array(nnz);
  let p = 0;
  for (let i = 0; i < n; i++) {
    const o = i * dims;
    for (let d = 0; d < dims; d++) {
      const v = vectors[o + d]!;
      if (v === 0) continue;
      indices[p] = d;
      data[p++] = v;
    }
    indptr[i + 1] = p;
  }
  return { dims, indptr, indices, data };
}
