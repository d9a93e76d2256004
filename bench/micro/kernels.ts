import { measure } from "mitata";
import { loadNativeKernelSettings } from "../../src/config";
import { alsSweep, alsSweepTs, DEFAULT_ALS } from "../../src/engine/als";
import { addContentRow, buildContentVectors, type ContentVectors } from "../../src/engine/content";
import { foldInUser, scoreFactors } from "../../src/engine/fold-in";
import { buildAnnIndex, denseRows, exactSearch, searchAnn } from "../../src/engine/hnsw";
import { gramMatrix, spdInverse } from "../../src/engine/linalg";
import { configureNativeKernels, nativeKernels } from "../../src/engine/native";
import { createRng, gaussian } from "../../src/engine/rng";
import { buildWeightedMatrix } from "../../src/engine/weighting";
import { rowsDot, sparseRowsDot } from "../../src/modules/recommendations/serving/vector-rows";
import { generateSynthetic } from "../data/synthetic";
import type { BenchSize } from "../lib/types";

// The service's own settings: with RECSYS_NATIVE=0 the native columns are n/a.
configureNativeKernels(loadNativeKernelSettings());

/** One kernel measured two ways: the baseline (plain TypeScript, or brute force) and the faster variant. */
export interface KernelPair {
  kernel: string;
  size: string;
  baselineLabel: string;
  baselineMs: number;
  variantLabel: string;
  /** Null when the variant cannot run here (e.g. no C compiler for the native kernels). */
  variantMs: number | null;
  note?: string;
}

export interface MicroSizes {
  minCpuNs: number;
  alsInteractions: number;
  spdN: number;
  items: number;
  hnswItems: number;
}

export const MICRO_SIZES: Record<BenchSize, MicroSizes> = {
  smoke: { minCpuNs: 20e6, alsInteractions: 5_000, spdN: 64, items: 5_000, hnswItems: 2_000 },
  default: { minCpuNs: 400e6, alsInteractions: 100_000, spdN: 512, items: 100_000, hnswItems: 20_000 },
  full: { minCpuNs: 1e9, alsInteractions: 1_000_000, spdN: 1024, items: 100_000, hnswItems: 100_000 },
};

/** Median milliseconds per call, measured by mitata. */
export async function timeMs(fn: () => unknown, minCpuNs: number): Promise<number> {
  const stats = await measure(fn, { min_cpu_time: minCpuNs, max_samples: 1e6, warmup_samples: 2 });
  return stats.p50 / 1e6;
}

function randomFactors(n: number, k: number, seed: number): Float32Array {
  const rng = createRng(seed);
  const f = new Float32Array(n * k);
  for (let i = 0; i < f.length; i++) f[i] = gaussian(rng) * 0.1;
  return f;
}

export async function alsSweepPair(s: MicroSizes): Promise<KernelPair> {
  const data = generateSynthetic({ interactions: s.alsInteractions, seed: 1 });
  const ui = buildWeightedMatrix(data.events);
  const k = DEFAULT_ALS.factors;
  const X = randomFactors(ui.nRows, k, 1);
  const Y = randomFactors(ui.nCols, k, 2);
  const o = DEFAULT_ALS;
  const size = `${ui.nRows} users × ${ui.nCols} items, nnz ${ui.indices.length}, k ${k}`;
  const ts = await timeMs(
    () => alsSweepTs(ui, X, Y, gramMatrix(Y, ui.nCols, k), k, o.alpha, o.regularization, o.cgSteps),
    s.minCpuNs,
  );
  const native = nativeKernels()
    ? await timeMs(() => alsSweep(ui, X, Y, k, { ...o, native: true }), s.minCpuNs)
    : null;
  return {
    kernel: "ALS half-sweep (CG, 3 steps)",
    size,
    baselineLabel: "TS",
    baselineMs: ts,
    variantLabel: "native",
    variantMs: native,
  };
}

export async function spdInversePair(s: MicroSizes): Promise<KernelPair> {
  const n = s.spdN;
  const base = new Float64Array(n * n);
  const g = randomFactors(n * 2, n, 3);
  for (let r = 0; r < n * 2; r++)
    for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) base[i * n + j]! += g[r * n + i]! * g[r * n + j]!;
  for (let i = 0; i < n; i++) base[i * n + i]! += 1;
  const a = new Float64Array(n * n);
  const run = (native: boolean) => () => {
    a.set(base);
    spdInverse(a, n, { native });
  };
  const ts = await timeMs(run(false), s.minCpuNs);
  const native = nativeKernels() ? await timeMs(run(true), s.minCpuNs) : null;
  return {
    kernel: "SPD inverse (EASE)",
    size: `${n}×${n}`,
    baselineLabel: "TS",
    baselineMs: ts,
    variantLabel: "native",
    variantMs: native,
  };
}

/**
 * The serving hot path: fold a short history into a user vector, then score candidates (the rows of 200
 * items scattered over the catalogue, dense factors and sparse content rows) or every item.
 */
export async function scoringPairs(s: MicroSizes): Promise<KernelPair[]> {
  const k = DEFAULT_ALS.factors;
  const Y = randomFactors(s.items, k, 4);
  const x = randomFactors(1, k, 5);
  const out = new Float32Array(s.items);
  const dot = await timeMs(() => scoreFactors(x, Y, k, out), s.minCpuNs);
  const basis = { k, itemFactors: Y, itemGram: gramMatrix(Y, s.items, k), alpha: 10, regularization: 0.1 };
  const hist = {
    items: Int32Array.from({ length: 20 }, (_, i) => (i * 97) % s.items),
    weights: new Float32Array(20).fill(1),
  };
  const hasNative = nativeKernels() !== null;
  const fold = (native: boolean) => () => foldInUser(basis, hist, undefined, { native });
  const rng = createRng(8);
  const candidates = Int32Array.from({ length: 200 }, () => Math.floor(rng() * s.items));
  const scores = new Float32Array(candidates.length);
  const dense = (native: boolean) => () => {
    scores.fill(Number.NaN);
    rowsDot(Y, k, candidates, x, scores, { native });
  };
  const content = syntheticContent(s.items);
  const profile = new Float32Array(content.dims);
  for (let h = 0; h < 20; h++) addContentRow(content, (h * 97) % s.items, 1, profile);
  const sparse = (native: boolean) => () => {
    scores.fill(Number.NaN);
    sparseRowsDot(content, candidates, profile, scores, { native });
  };
  const pair = async (kernel: string, size: string, run: (native: boolean) => () => unknown) => ({
    kernel,
    size,
    baselineLabel: "TS",
    baselineMs: await timeMs(run(false), s.minCpuNs),
    variantLabel: "native",
    variantMs: hasNative ? await timeMs(run(true), s.minCpuNs) : null,
  });
  return [
    {
      kernel: "dot products (score all items)",
      size: `${s.items} items, k ${k}`,
      baselineLabel: "TS",
      baselineMs: dot,
      variantLabel: "native",
      variantMs: null,
      note: "scans are for catalogues of at most 2,000 items; larger ones score candidates",
    },
    await pair("candidate scoring, factors", `200 of ${s.items} items, k ${k}`, dense),
    await pair(
      "candidate scoring, content rows",
      `200 of ${s.items} items, ${(content.indptr[s.items]! / s.items).toFixed(1)} non-zeros per row`,
      sparse,
    ),
    await pair("fold-in of a 20-item history", `k ${k}`, fold),
  ];
}

/** Content rows of a synthetic catalogue (names, categories, brands), as training builds them. */
function syntheticContent(nItems: number): ContentVectors {
  const data = generateSynthetic({ interactions: nItems, nItems, nUsers: 100, seed: 9, withMeta: true });
  return buildContentVectors(data.items, nItems);
}

/** Top-20 by the engine's HNSW wrapper (hnswlib-node, inner product) vs its exact search; recall reported. */
export async function hnswPairs(s: MicroSizes): Promise<KernelPair[]> {
  const k = DEFAULT_ALS.factors;
  const n = s.hnswItems;
  const Y = randomFactors(n, k, 6);
  const ix = buildAnnIndex(denseRows(Y, k), "ip");
  const queries = Array.from({ length: 50 }, (_, q) => randomFactors(1, k, 100 + q));
  const onePercent = (item: number) => item % 100 === 0;
  const recall = (filter?: (item: number) => boolean) => {
    let hits = 0;
    let total = 0;
    for (const qv of queries) {
      const exact = new Set(exactSearch(ix, qv, 20, filter).items);
      total += exact.size;
      for (const id of searchAnn(ix, qv, 20, filter).items) if (exact.has(id)) hits++;
    }
    return (hits / Math.max(1, total)).toFixed(3);
  };
  let q = 0;
  const next = () => queries[q++ % queries.length]!;
  const size = `${n} items, k ${k}`;
  const ef = `M ${ix.options.m}, ef ${ix.options.efSearch}`;
  return [
    {
      kernel: "top-20 nearest items",
      size,
      baselineLabel: "exact",
      baselineMs: await timeMs(() => exactSearch(ix, next(), 20), s.minCpuNs),
      variantLabel: "HNSW",
      variantMs: await timeMs(() => searchAnn(ix, next(), 20), s.minCpuNs),
      note: `recall@20 vs exact ${recall()} (${ef})`,
    },
    {
      kernel: "top-20 nearest, filter = 1% of items",
      size,
      baselineLabel: "exact",
      baselineMs: await timeMs(() => exactSearch(ix, next(), 20, onePercent), s.minCpuNs),
      variantLabel: "searchAnn",
      variantMs: await timeMs(() => searchAnn(ix, next(), 20, onePercent), s.minCpuNs),
      note: `recall@20 vs exact ${recall(onePercent)}; the engine answers selective filters exactly`,
    },
  ];
}
