import {
  closeSync,
  mkdtempSync,
  openSync,
  readFileSync,
  readSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type * as Hnswlib from "hnswlib-node";
import { nativeKernelsLibrary } from "./native";
import { topK } from "./topk";

// Required by literal path (not via the package's `bindings` lookup) so `bun build --compile` embeds the addon.
const addon: typeof Hnswlib = require("../../node_modules/hnswlib-node/build/Release/addon.node");

export type AnnSpace = "ip" | "cosine";

export interface AnnOptions {
  m: number;
  efConstruction: number;
  efSearch: number;
  seed: number;
  /** Below this estimated share of matching items a filtered query is answered by exact scoring. */
  exactBelowSelectivity: number;
  /** Store sparse rows by their non-zeros when that takes at most half the bytes (see `sparseCapacity`). */
  sparse: boolean;
}

export const DEFAULT_ANN: Readonly<AnnOptions> = Object.freeze({
  m: 16,
  efConstruction: 100,
  efSearch: 128,
  seed: 42,
  exactBelowSelectivity: 0.02,
  sparse: true,
});

/** The vectors an index is built over, n rows of `dims`, read one row at a time. */
export interface AnnRows {
  readonly n: number;
  readonly dims: number;
  /** Writes row `item` whole into `into` (length `dims`) and returns it. */
  row(item: number, into: Float32Array): Float32Array;
}

/** The rows of a dense row-major matrix. */
export function denseRows(vectors: Float32Array, dims: number): AnnRows {
  return {
    n: Math.floor(vectors.length / dims),
    dims,
    row: (item, into) => {
      into.set(vectors.subarray(item * dims, (item + 1) * dims));
      return into;
    },
  };
}

/** HNSW over rows of a vector matrix; labels are item indices. Zero rows are left out (nothing to match). */
export interface AnnIndex {
  space: AnnSpace;
  dims: number;
  rows: AnnRows;
  index: Hnswlib.HierarchicalNSW;
  /** Non-zeros each stored row can hold when the index keeps rows sparse; 0: rows stored whole. */
  capacity: number;
  options: AnnOptions;
}

/** The native kernels' file handed to the addon as its fold-in (`foldedSearches`), and whether it took it. */
let foldInKernel: { library: string | null; taken: boolean } | undefined;

/**
 * Whether an index can fold a history in on the pool's thread before searching (`searchFoldedAsync`): the
 * addon then runs the very fold-in kernel `foldInUser` calls here (native.ts), so both solve the same vector.
 * False without the native kernels.
 */
export function foldedSearches(): boolean {
  const library = nativeKernelsLibrary();
  if (foldInKernel?.library !== library) {
    foldInKernel = {
      library,
      taken: library !== null && addon.HierarchicalNSW.useFoldInKernel(library),
    };
  }
  return foldInKernel.taken;
}

export interface Neighbours {
  items: Int32Array;
  /** Inner product (ip) or cosine similarity (cosine); higher is closer. */
  scores: Float32Array;
}

function norm(v: Float32Array): number {
  let s = 0;
  for (let d = 0; d < v.length; d++) s += v[d]! * v[d]!;
  return Math.sqrt(s);
}

/**
 * Rows with at most this many non-zeros in `dims` are stored by their non-zeros when that takes at most half
 * the bytes of the whole row: 4 bytes of count and 6 per non-zero (value and dimension) against 4 per
 * dimension. A search reads every row it visits; a hashed bag of words (about 10 of 256 dimensions set) is
 * then about 100 bytes instead of 1 KB, and the search reads a fraction of the memory (0 = store whole rows).
 */
export function sparseCapacity(maxNonZeros: number, dims: number): number {
  const capacity = maxNonZeros + (maxNonZeros % 2); // even, so every row's floats stay 4-byte aligned
  return capacity > 0 && 4 + 6 * capacity <= 2 * dims ? capacity : 0;
}

function maxNonZeros(rows: AnnRows): number {
  const row = new Float32Array(rows.dims);
  let most = 0;
  for (let i = 0; i < rows.n; i++) {
    rows.row(i, row);
    let count = 0;
    for (let d = 0; d < row.length; d++) if (row[d] !== 0) count++;
    if (count > most) most = count;
  }
  return most;
}

export function buildAnnIndex(rows: AnnRows, space: AnnSpace, options: Partial<AnnOptions> = {}): AnnIndex {
  const o = { ...DEFAULT_ANN, ...options };
  const { n, dims } = rows;
  const capacity = o.sparse ? sparseCapacity(maxNonZeros(rows), dims) : 0;
  const index = new addon.HierarchicalNSW(space, dims, capacity);
  index.initIndex({
    maxElements: Math.max(1, n),
    m: o.m,
    efConstruction: o.efConstruction,
    randomSeed: o.seed,
  });
  const row = new Float32Array(dims);
  const point = new Array<number>(dims);
  for (let i = 0; i < n; i++) {
    rows.row(i, row);
    if (norm(row) === 0) continue;
    for (let d = 0; d < dims; d++) point[d] = row[d]!;
    index.addPoint(point, i);
  }
  index.setEf(o.efSearch);
  return { space, dims, rows, index, capacity, options: o };
}

/** Similarity used by the index, computed exactly (for the selective-filter path and for tests). */
export function exactSimilarity(
  ix: Pick<AnnIndex, "space" | "rows">,
  query: Float32Array,
  item: number,
  scratch = new Float32Array(ix.rows.dims),
): number {
  const row = ix.rows.row(item, scratch);
  let dot = 0;
  for (let d = 0; d < row.length; d++) dot += query[d]! * row[d]!;
  if (ix.space === "ip") return dot;
  const n = norm(row) * norm(query);
  return n === 0 ? Number.NEGATIVE_INFINITY : dot / n;
}

/** Exact top-k by scanning every item that passes the filter. */
export function exactSearch(
  ix: Pick<AnnIndex, "space" | "rows">,
  query: Float32Array,
  k: number,
  filter?: (item: number) => boolean,
): Neighbours {
  const n = ix.rows.n;
  const scores = new Float32Array(n).fill(Number.NEGATIVE_INFINITY);
  const scratch = new Float32Array(ix.rows.dims);
  for (let i = 0; i < n; i++) if (!filter || filter(i)) scores[i] = exactSimilarity(ix, query, i, scratch);
  const items = topK(scores, k);
  return { items, scores: Float32Array.from(items, (i) => scores[i]!) };
}

function estimateSelectivity(n: number, filter: (item: number) => boolean): number {
  const samples = Math.min(n, 256);
  if (samples === 0) return 0;
  let hits = 0;
  // A fixed stride keeps the estimate deterministic; item order is not correlated with filters in practice.
  const stride = n / samples;
  for (let s = 0; s < samples; s++) if (filter(Math.floor(s * stride))) hits++;
  return hits / samples;
}

/**
 * k nearest items to `query`. With a filter, the HNSW walk skips non-matching labels; when the filter keeps
 * only a small share of items (or the walk comes back short) the matching items are scored exactly instead.
 */
export function searchAnn(
  ix: AnnIndex,
  query: Float32Array,
  k: number,
  filter?: (item: number) => boolean,
): Neighbours {
  const n = ix.index.getCurrentCount();
  if (n === 0 || k <= 0) return { items: new Int32Array(0), scores: new Float32Array(0) };
  if (filter && estimateSelectivity(ix.rows.n, filter) < ix.options.exactBelowSelectivity) {
    return exactSearch(ix, query, k, filter);
  }
  const kk = Math.min(k, n);
  if (ix.index.getEf() < kk) ix.index.setEf(kk);
  const res = ix.index.searchKnn(query, kk, filter);
  if (filter && res.neighbors.length < kk) return exactSearch(ix, query, k, filter);
  const items = new Int32Array(res.neighbors.buffer, res.neighbors.byteOffset, res.neighbors.length);
  // hnswlib reports distances (1 − similarity for ip and cosine) in ascending order.
  const scores = res.distances;
  for (let j = 0; j < scores.length; j++) scores[j] = 1 - scores[j]!;
  return { items, scores };
}

/** Index bytes via a temp file (hnswlib only writes to paths). */
export function serializeAnnIndex(ix: AnnIndex): Uint8Array {
  const dir = mkdtempSync(join(tmpdir(), "ann-"));
  try {
    const file = join(dir, "index.bin");
    ix.index.writeIndexSync(file);
    return new Uint8Array(readFileSync(file));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export function deserializeAnnIndex(
  bytes: Uint8Array,
  rows: AnnRows,
  space: AnnSpace,
  options: Partial<AnnOptions> = {},
): AnnIndex {
  const dir = mkdtempSync(join(tmpdir(), "ann-"));
  try {
    const file = join(dir, "index.bin");
    writeFileSync(file, bytes);
    return readAnnIndexFile(file, rows, space, options);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Loads an index kept as its own file (`file`), writing it there from `bytes` first unless the file already
 * holds them: hnswlib reads only from paths, so a file left in place spares every later load the copy. The
 * file is used when its size matches and a sample of windows spread over it equals `bytes` (which tells
 * another model's index from this one; it is not a checksum), and is replaced otherwise, atomically.
 */
export function loadAnnIndexFile(
  file: string,
  bytes: Uint8Array,
  rows: AnnRows,
  space: AnnSpace,
  options: Partial<AnnOptions> = {},
): AnnIndex {
  // An unwritable place only costs the copy next time.
  if (!placeAnnIndexFile(file, bytes)) return deserializeAnnIndex(bytes, rows, space, options);
  return readAnnIndexFile(file, rows, space, options);
}

/**
 * Makes `file` hold the index `bytes` (kept when it already does, replaced atomically otherwise); false when
 * it cannot be written. The half of `loadAnnIndexFile` that may run on another thread than the index's use.
 */
export function placeAnnIndexFile(file: string, bytes: Uint8Array): boolean {
  if (fileHolds(file, bytes)) return true;
  try {
    const temporary = `${file}.${process.pid}.${Math.random().toString(36).slice(2, 8)}.tmp`;
    writeFileSync(temporary, bytes);
    renameSync(temporary, file);
    return true;
  } catch {
    return false;
  }
}

/**
 * Reads an index file without holding the calling thread: hnswlib parses it on a thread of its pool (a
 * 100k-item index takes a few hundred ms, which would otherwise stall every request of the process).
 */
export async function readAnnIndexFileAsync(
  file: string,
  rows: AnnRows,
  space: AnnSpace,
  options: Partial<AnnOptions> = {},
): Promise<AnnIndex> {
  const o = { ...DEFAULT_ANN, ...options };
  const capacity = storedCapacity(file, rows.dims);
  const index = new addon.HierarchicalNSW(space, rows.dims, capacity);
  await index.readIndex(file);
  index.setEf(o.efSearch);
  return { space, dims: rows.dims, rows, index, capacity, options: o };
}

/**
 * How the index file stores its rows, from its header: hnswlib writes each row's offset and its label's
 * offset (bytes 32 and 40, little-endian), so the bytes in between are a row's. Whole rows take 4 bytes a
 * dimension; anything else is the sparse form (4 + 6 × capacity). Indexes written before the sparse form
 * existed read as whole rows, as they were written.
 */
function storedCapacity(file: string, dims: number): number {
  const header = new Uint8Array(48);
  const fd = openSync(file, "r");
  try {
    if (readSync(fd, header, 0, 48, 0) !== 48) throw new Error(`not an HNSW index file: ${file}`);
  } finally {
    closeSync(fd);
  }
  const view = new DataView(header.buffer);
  const rowBytes = Number(view.getBigUint64(32, true) - view.getBigUint64(40, true));
  if (rowBytes === 4 * dims) return 0;
  const capacity = (rowBytes - 4) / 6;
  if (!Number.isInteger(capacity) || capacity <= 0 || capacity > dims) {
    throw new Error(
      `HNSW index file ${file} stores ${rowBytes}-byte rows, which fit neither form of ${dims} dimensions`,
    );
  }
  return capacity;
}

const SAMPLE_WINDOWS = 16;
const WINDOW_BYTES = 512;

/** Whether `file` has `bytes`' size and content (compared at a fixed sample of windows, ends included). */
function fileHolds(file: string, bytes: Uint8Array): boolean {
  let fd: number | undefined;
  try {
    if (statSync(file).size !== bytes.length) return false;
    fd = openSync(file, "r");
    const window = new Uint8Array(WINDOW_BYTES);
    const last = Math.max(0, bytes.length - WINDOW_BYTES);
    for (let w = 0; w < SAMPLE_WINDOWS; w++) {
      const at = Math.floor((last * w) / (SAMPLE_WINDOWS - 1));
      const length = Math.min(WINDOW_BYTES, bytes.length - at);
      if (readSync(fd, window, 0, length, at) !== length) return false;
      for (let b = 0; b < length; b++) if (window[b] !== bytes[at + b]) return false;
    }
    return true;
  } catch {
    return false;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

function readAnnIndexFile(
  file: string,
  rows: AnnRows,
  space: AnnSpace,
  options: Partial<AnnOptions>,
): AnnIndex {
  const o = { ...DEFAULT_ANN, ...options };
  const capacity = storedCapacity(file, rows.dims);
  const index = new addon.HierarchicalNSW(space, rows.dims, capacity);
  index.readIndexSync(file);
  index.setEf(o.efSearch);
  return { space, dims: rows.dims, rows, index, capacity, options: o };
}
