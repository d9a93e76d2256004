import { describe, expect, test } from "bun:test";
import { readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type FoldInBasis, foldInUser } from "../../src/engine/fold-in";
import {
  type AnnIndex,
  type AnnSpace,
  buildAnnIndex,
  denseRows,
  deserializeAnnIndex,
  exactSearch,
  exactSimilarity,
  foldedSearches,
  loadAnnIndexFile,
  readAnnIndexFileAsync,
  searchAnn,
  serializeAnnIndex,
  sparseCapacity,
} from "../../src/engine/hnsw";
import { createRng, gaussian } from "../../src/engine/rng";
import { HierarchicalNSW } from "../../src/shared/hnswlib";
import { makeTempDir } from "../helpers/temp-dirs";

/** Clustered vectors, like trained item factors (random isotropic data is an unrealistic worst case). */
function clustered(n: number, dims: number, seed: number): Float32Array {
  const rng = createRng(seed);
  const centres = Float32Array.from({ length: 40 * dims }, () => gaussian(rng));
  const v = new Float32Array(n * dims);
  for (let i = 0; i < n; i++) {
    const c = Math.floor(rng() * 40);
    for (let d = 0; d < dims; d++) v[i * dims + d] = centres[c * dims + d]! + 0.6 * gaussian(rng);
  }
  return v;
}

function recall(ix: AnnIndex, queries: Float32Array, k: number, filter?: (i: number) => boolean): number {
  let hit = 0;
  let total = 0;
  const nq = queries.length / ix.dims;
  for (let q = 0; q < nq; q++) {
    const query = queries.subarray(q * ix.dims, (q + 1) * ix.dims);
    const truth = new Set(exactSearch(ix, query, k, filter).items);
    for (const i of searchAnn(ix, query, k, filter).items) if (truth.has(i)) hit++;
    total += truth.size;
  }
  return hit / total;
}

describe("HNSW wrapper", () => {
  const dims = 32;
  const vectors = clustered(3000, dims, 1);
  const queries = clustered(100, dims, 2);

  for (const space of ["ip", "cosine"] as AnnSpace[]) {
    test(`${space}: recall@10 ≥ 0.95 against brute force, also after serialize/load`, () => {
      const ix = buildAnnIndex(denseRows(vectors, dims), space);
      expect(recall(ix, queries, 10)).toBeGreaterThanOrEqual(0.95);
      const bytes = serializeAnnIndex(ix);
      const loaded = deserializeAnnIndex(bytes, denseRows(vectors, dims), space);
      expect(loaded.index.getCurrentCount()).toBe(3000);
      expect(recall(loaded, queries, 10)).toBeGreaterThanOrEqual(0.95);
    });
  }

  test("filters: broad filters go through the graph, selective ones are answered exactly", () => {
    const ix = buildAnnIndex(denseRows(vectors, dims), "ip");
    const even = (i: number) => i % 2 === 0;
    expect(recall(ix, queries, 10, even)).toBeGreaterThanOrEqual(0.95);
    const rare = (i: number) => i % 500 === 3;
    const q = queries.subarray(0, dims);
    const res = searchAnn(ix, q, 10, rare);
    expect([...res.items]).toEqual([...exactSearch(ix, q, 10, rare).items]);
    expect(res.items.length).toBe(6);
  });

  test("an index kept as its own file is written once, read in place after, and replaced when it differs", () => {
    const ix = buildAnnIndex(denseRows(vectors, dims), "ip");
    const bytes = serializeAnnIndex(ix);
    const file = join(makeTempDir("ann-file-"), "factors.hnsw");
    const first = loadAnnIndexFile(file, bytes, denseRows(vectors, dims), "ip");
    expect(recall(first, queries, 10)).toBeGreaterThanOrEqual(0.95);
    expect(readFileSync(file).equals(Buffer.from(bytes))).toBe(true);
    const written = statSync(file).mtimeMs;

    // Matching file: used as it is (not rewritten).
    const again = loadAnnIndexFile(file, bytes, denseRows(vectors, dims), "ip");
    expect(statSync(file).mtimeMs).toBe(written);
    expect(again.index.getCurrentCount()).toBe(3000);

    // Same size, other content (as another model's index under a reused id would be): replaced before use.
    writeFileSync(
      file,
      bytes.map((b) => b ^ 0xff),
    );
    const repaired = loadAnnIndexFile(file, bytes, denseRows(vectors, dims), "ip");
    expect(readFileSync(file).equals(Buffer.from(bytes))).toBe(true);
    expect(recall(repaired, queries, 10)).toBeGreaterThanOrEqual(0.95);

    // An unwritable place still loads (through a temporary file).
    const nowhere = join(file, "cannot", "exist.hnsw");
    expect(loadAnnIndexFile(nowhere, bytes, denseRows(vectors, dims), "ip").index.getCurrentCount()).toBe(
      3000,
    );
  });

  // The addon is patched (patches/hnswlib-node@3.0.0.patch): a Float32Array query is read in place and
  // answered with typed arrays, and distances use AVX where the CPU has it, chosen at run time.
  for (const [space, d] of [
    ["cosine", 256],
    ["ip", 64],
    ["cosine", 20],
  ] as [AnnSpace, number][]) {
    test(`${space}, ${d} dims: a Float32Array query finds what the same point as an Array finds, at exact distances`, () => {
      const rows = clustered(2000, d, 3);
      const ix = buildAnnIndex(denseRows(rows, d), space);
      const points = clustered(20, d, 4);
      for (let q = 0; q < 20; q++) {
        // A view into a larger array, as the service passes an item's own factor row.
        const query = points.subarray(q * d, (q + 1) * d);
        const before = query.slice();
        const typed = ix.index.searchKnn(query, 10);
        // Read, not written: a cosine index normalises its own copy of the point.
        expect(query).toEqual(before);
        expect(typed.neighbors).toBeInstanceOf(Uint32Array);
        expect(typed.distances).toBeInstanceOf(Float32Array);
        const plain = ix.index.searchKnn(Array.from(query), 10);
        expect([...typed.neighbors]).toEqual(plain.neighbors);
        expect([...typed.distances]).toEqual(plain.distances.map(Math.fround));
        for (let j = 0; j < 10; j++) {
          const exact = exactSearch(ix, query, 1, (i) => i === typed.neighbors[j]).scores[0]!;
          expect(1 - typed.distances[j]!).toBeCloseTo(exact, 4);
        }
      }
      expect(() => ix.index.searchKnn(new Float32Array(d + 1), 1)).toThrow(/array length/);
      expect(() => ix.index.searchKnn(new Float64Array(d) as unknown as Float32Array, 1)).toThrow(
        /Float32Array/,
      );
    });
  }

  // Searches off the request thread (patches/hnswlib-node@3.0.0.patch): the same walk as searchKnn's, with
  // the candidate list's size passed along instead of set on the index that other searches share.
  for (const [space, d, sparse] of [
    ["ip", 64, false],
    ["cosine", 20, false],
    ["cosine", 256, true],
  ] as [AnnSpace, number, boolean][]) {
    test(`${space}, ${d} dims${sparse ? ", sparse rows" : ""}: searchKnnAsync answers what searchKnn answers at the same ef`, async () => {
      const rows = sparse ? sparseClustered(2000, d, 7) : clustered(2000, d, 7);
      const ix = buildAnnIndex(denseRows(rows, d), space);
      expect(ix.capacity > 0).toBe(sparse);
      const points = clustered(40, d, 8);
      for (const [k, ef] of [
        [10, 0],
        [10, 10],
        [25, 200],
        [100, 100],
      ] as const) {
        const queries = Array.from({ length: 40 }, (_, q) => points.subarray(q * d, (q + 1) * d));
        // All at once: the pool runs several searches of one index together.
        const together = await Promise.all(queries.map((query) => ix.index.searchKnnAsync(query, k, ef)));
        ix.index.setEf(ef > 0 ? ef : ix.options.efSearch);
        for (let q = 0; q < queries.length; q++) {
          const alone = ix.index.searchKnn(queries[q]!, k);
          expect(together[q]!.neighbors).toEqual(alone.neighbors);
          expect(together[q]!.distances).toEqual(alone.distances);
        }
      }
      // Its own ef does not change the index's.
      ix.index.setEf(33);
      await ix.index.searchKnnAsync(points.subarray(0, d), 5, 300);
      expect(ix.index.getEf()).toBe(33);
      expect(() => ix.index.searchKnnAsync(new Float32Array(d + 1), 1, 0)).toThrow(/array length/);
      expect(() => ix.index.searchKnnAsync(Array.from(points.subarray(0, d)) as never, 1, 0)).toThrow(
        /Float32Array/,
      );
      expect(() => ix.index.searchKnnAsync(points.subarray(0, d), 1_000_000, 0)).toThrow(/maxElements/);
    });
  }

  test("a search under way keeps its index alive when nothing else refers to it", async () => {
    const d = 32;
    const query = clustered(1, d, 10);
    let expected: number[] = [];
    const pending = (() => {
      const ix = buildAnnIndex(denseRows(clustered(3000, d, 9), d), "ip");
      ix.index.setEf(400);
      expected = [...ix.index.searchKnn(query, 50).neighbors];
      return ix.index.searchKnnAsync(query, 50, 400);
    })();
    Bun.gc(true);
    expect([...(await pending).neighbors]).toEqual(expected);
  });

  describe("a search that folds the history in on the pool's thread first (searchFoldedAsync)", () => {
    const k = 24;
    const factors = clustered(2500, k, 11);
    const gram = new Float64Array(k * k);
    for (let i = 0; i < 2500; i++) {
      for (let a = 0; a < k; a++) {
        for (let b = 0; b < k; b++) gram[a * k + b]! += factors[i * k + a]! * factors[i * k + b]!;
      }
    }
    const basis: FoldInBasis = { k, itemFactors: factors, itemGram: gram, alpha: 8, regularization: 0.05 };
    const ix = buildAnnIndex(denseRows(factors, k), "ip");
    const fold = (items: Int32Array, weights: Float32Array) => ({
      factors,
      gram,
      items,
      weights,
      alpha: basis.alpha,
      regularization: basis.regularization,
    });

    test("solves the very vector foldInUser solves here, and finds what searchKnnAsync finds for it", async () => {
      expect(foldedSearches()).toBe(true);
      const rng = createRng(12);
      const histories = Array.from({ length: 30 }, (_, u) => {
        const n = 1 + (u % 9);
        return {
          items: Int32Array.from({ length: n }, () => Math.floor(rng() * 2500)),
          // Dislikes among them, which the solve leaves out, and a history of nothing but one.
          weights: Float32Array.from({ length: n }, (_, h) =>
            u === 0 || h % 4 === 3 ? -1 : 0.5 + 3 * rng(),
          ),
        };
      });
      const folded = await Promise.all(
        histories.map((h) => ix.index.searchFoldedAsync(fold(h.items, h.weights), 40, 0)),
      );
      for (let u = 0; u < histories.length; u++) {
        const vector = foldInUser(basis, histories[u]!);
        expect(folded[u]!.query).toEqual(vector);
        const plain = await ix.index.searchKnnAsync(vector, 40, 0);
        expect(folded[u]!.neighbors).toEqual(plain.neighbors);
        expect(folded[u]!.distances).toEqual(plain.distances);
      }
    });

    test("refuses what it cannot solve from, as searchKnnAsync refuses a bad query", () => {
      const items = Int32Array.of(1, 2);
      const weights = Float32Array.of(1, 2);
      expect(() => ix.index.searchFoldedAsync(fold(items, Float32Array.of(1)), 5, 0)).toThrow(
        /weight per item/,
      );
      expect(() =>
        ix.index.searchFoldedAsync({ ...fold(items, weights), factors: factors.subarray(1) }, 5, 0),
      ).toThrow(/rows of 24 factors/);
      expect(() =>
        ix.index.searchFoldedAsync({ ...fold(items, weights), gram: new Float64Array(k) }, 5, 0),
      ).toThrow(/Gram matrix/);
      expect(() =>
        ix.index.searchFoldedAsync({ ...fold(items, weights), items: Uint32Array.of(1, 2) } as never, 5, 0),
      ).toThrow(/Int32Array/);
      expect(() => ix.index.searchFoldedAsync(fold(items, weights), 1_000_000, 0)).toThrow(/maxElements/);
      expect(() => ix.index.searchFoldedAsync(undefined as never, 5, 0)).toThrow(/fold-in/);
      // A file without the kernel is refused, and the kernel taken before stays.
      expect(HierarchicalNSW.useFoldInKernel("/nonexistent/kernels.so")).toBe(false);
      expect(foldedSearches()).toBe(true);
    });
  });

  test("zero vectors are not indexed", () => {
    const v = new Float32Array(4 * 3);
    v.set([1, 0, 0], 0);
    v.set([0, 1, 0], 6);
    const ix = buildAnnIndex(denseRows(v, 3), "cosine");
    expect(ix.index.getCurrentCount()).toBe(2);
  });
});

/**
 * Rows like hashed content vectors: 3 to 12 of 256 dimensions set, drawn mostly from a cluster's own
 * dimensions, so that neighbours share dimensions as products of one category share tokens.
 */
function sparseClustered(n: number, dims: number, seed: number): Float32Array {
  const rng = createRng(seed);
  const own = Array.from({ length: 40 }, () => Array.from({ length: 8 }, () => Math.floor(rng() * dims)));
  const v = new Float32Array(n * dims);
  for (let i = 0; i < n; i++) {
    const cluster = own[Math.floor(rng() * 40)]!;
    const set = 3 + Math.floor(rng() * 10);
    for (let j = 0; j < set; j++) {
      const d = rng() < 0.7 ? cluster[Math.floor(rng() * cluster.length)]! : Math.floor(rng() * dims);
      v[i * dims + d] = gaussian(rng);
    }
  }
  return v;
}

describe("HNSW over sparse rows", () => {
  const dims = 256;
  const vectors = sparseClustered(3000, dims, 5);
  const rows = denseRows(vectors, dims);
  // Queries as a user's content profile is made: the sum of a few rows.
  const queries = new Float32Array(100 * dims);
  const rng = createRng(6);
  for (let q = 0; q < 100; q++)
    for (let h = 0; h < 8; h++) {
      const item = Math.floor(rng() * 3000);
      for (let d = 0; d < dims; d++) queries[q * dims + d]! += vectors[item * dims + d]!;
    }

  test("the capacity is the most non-zeros of a row, rounded up to even, when that halves the bytes", () => {
    expect(sparseCapacity(11, 256)).toBe(12);
    expect(sparseCapacity(12, 256)).toBe(12);
    expect(sparseCapacity(84, 256)).toBe(84); // 4 + 6 × 84 = 508 bytes, against 1,024 whole
    expect(sparseCapacity(86, 256)).toBe(0);
    expect(sparseCapacity(64, 64)).toBe(0);
    expect(sparseCapacity(0, 256)).toBe(0);
  });

  for (const space of ["ip", "cosine"] as AnnSpace[]) {
    test(`${space}: stored sparsely, same recall and exact similarities, under a quarter of the bytes, and reloaded as such`, async () => {
      const ix = buildAnnIndex(rows, space);
      expect(ix.capacity).toBe(12);
      const whole = buildAnnIndex(rows, space, { sparse: false });
      expect(whole.capacity).toBe(0);
      expect(recall(ix, queries, 10)).toBeGreaterThanOrEqual(0.95);
      expect(Math.abs(recall(ix, queries, 10) - recall(whole, queries, 10))).toBeLessThan(0.02);
      for (let q = 0; q < 10; q++) {
        const query = queries.subarray(q * dims, (q + 1) * dims);
        const found = searchAnn(ix, query, 10);
        for (let j = 0; j < found.items.length; j++)
          expect(found.scores[j]!).toBeCloseTo(exactSimilarity(ix, query, found.items[j]!), 5);
      }

      const bytes = serializeAnnIndex(ix);
      expect(bytes.length).toBeLessThan(serializeAnnIndex(whole).length / 4);
      const loaded = deserializeAnnIndex(bytes, rows, space);
      expect(loaded.capacity).toBe(12);
      const file = join(makeTempDir("ann-sparse-"), "content.hnsw");
      writeFileSync(file, bytes);
      const loadedAsync = await readAnnIndexFileAsync(file, rows, space);
      expect(loadedAsync.capacity).toBe(12);
      for (let q = 0; q < 20; q++) {
        const query = queries.subarray(q * dims, (q + 1) * dims);
        const before = [...searchAnn(ix, query, 10).items];
        expect([...searchAnn(loaded, query, 10).items]).toEqual(before);
        expect([...searchAnn(loadedAsync, query, 10).items]).toEqual(before);
      }
    });
  }

  test("an index of whole rows (as written before the sparse form) still loads as one", () => {
    const whole = buildAnnIndex(rows, "cosine", { sparse: false });
    const loaded = deserializeAnnIndex(serializeAnnIndex(whole), rows, "cosine");
    expect(loaded.capacity).toBe(0);
    expect(recall(loaded, queries, 10)).toBeGreaterThanOrEqual(0.95);
  });

  test("a stored row reads back whole, and a row with more non-zeros than the capacity is refused", () => {
    const ix = buildAnnIndex(rows, "ip");
    const point = ix.index.getPoint(7);
    expect(point).toEqual([...vectors.subarray(7 * dims, 8 * dims)]);
    const cosine = buildAnnIndex(rows, "cosine");
    const norm = Math.hypot(...vectors.subarray(7 * dims, 8 * dims));
    const unit = cosine.index.getPoint(7);
    for (let d = 0; d < dims; d++) expect(unit[d]!).toBeCloseTo(vectors[7 * dims + d]! / norm, 6);
    expect(() => ix.index.addPoint(new Array(dims).fill(1), 5000)).toThrow(/more non-zeros than/);
    expect(() => ix.index.getPoint(123_456)).toThrow(/Label not found/);
  });

  test("a file whose rows fit neither form is refused before hnswlib reads it", () => {
    const bytes = serializeAnnIndex(buildAnnIndex(rows, "ip"));
    const broken = bytes.slice();
    // The label's offset (bytes 32-39) one byte further on: 101-byte rows.
    new DataView(broken.buffer).setBigUint64(
      32,
      new DataView(bytes.buffer).getBigUint64(32, true) + 1n,
      true,
    );
    expect(() => deserializeAnnIndex(broken, rows, "ip")).toThrow(/fit neither form/);
  });
});
