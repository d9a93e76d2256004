import { describe, expect, test } from "bun:test";
import { readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  type AnnIndex,
  type AnnSpace,
  buildAnnIndex,
  denseRows,
  deserializeAnnIndex,
  exactSearch,
  loadAnnIndexFile,
  searchAnn,
  serializeAnnIndex,
} from "../../src/engine/hnsw";
import { createRng, gaussian } from "../../src/engine/rng";
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

  test("zero vectors are not indexed", () => {
    const v = new Float32Array(4 * 3);
    v.set([1, 0, 0], 0);
    v.set([0, 1, 0], 6);
    const ix = buildAnnIndex(denseRows(v, 3), "cosine");
    expect(ix.index.getCurrentCount()).toBe(2);
  });
});
