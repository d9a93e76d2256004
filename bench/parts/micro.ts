import { nativeKernels } from "../../src/engine/native";
import { formatNumber } from "../lib/table";
import { type BenchContext, type BenchPart, type Figure, NotAvailable, type PartOutput } from "../lib/types";
import { filterPairs } from "../micro/filters";
import {
  alsSweepPair,
  hnswPairs,
  type KernelPair,
  MICRO_SIZES,
  scoringPairs,
  spdInversePair,
} from "../micro/kernels";

/** In-process kernels under mitata: each faster variant (native, HNSW) next to its plain baseline. */
export const microPart: BenchPart = {
  name: "micro",
  description: "mitata kernels: TS vs native, HNSW vs brute force (median ms per call)",
  async run(ctx: BenchContext): Promise<PartOutput> {
    const s = MICRO_SIZES[ctx.size];
    const pairs: KernelPair[] = [];
    const missing: string[] = [];
    for (const [label, fn] of [
      ["ALS sweep", () => alsSweepPair(s)],
      ["SPD inverse", () => spdInversePair(s)],
      ["scoring", () => scoringPairs(s)],
      ["HNSW", () => hnswPairs(s)],
      ["filters", () => filterPairs(ctx.repoRoot, s)],
    ] as const) {
      ctx.log(label);
      try {
        const r = await fn();
        pairs.push(...(Array.isArray(r) ? r : [r]));
      } catch (error) {
        if (!(error instanceof NotAvailable)) throw error;
        missing.push(`${label}: ${error.message}`);
      }
    }
    const figures: Figure[] = [];
    const slug = (t: string) =>
      t
        .replace(/[^a-z0-9]+/gi, "-")
        .replace(/^-|-$/g, "")
        .toLowerCase();
    const rows = pairs.map((p) => {
      figures.push({
        key: `micro.${slug(p.kernel)}.${slug(p.baselineLabel)}.ms`,
        value: p.baselineMs,
        unit: "ms",
        better: "lower",
      });
      if (p.variantMs !== null)
        figures.push({
          key: `micro.${slug(p.kernel)}.${slug(p.variantLabel)}.ms`,
          value: p.variantMs,
          unit: "ms",
          better: "lower",
        });
      return [
        p.kernel,
        p.size,
        `${p.baselineLabel} ${formatNumber(p.baselineMs)}`,
        p.variantMs === null
          ? p.variantLabel === "-"
            ? "-"
            : `${p.variantLabel} n/a`
          : `${p.variantLabel} ${formatNumber(p.variantMs)}`,
        p.variantMs === null ? "-" : `${formatNumber(p.baselineMs / p.variantMs)}x`,
        p.note ?? "",
      ];
    });
    return {
      tables: [
        {
          title: "Kernels (median ms per call; speed-up = baseline / variant)",
          columns: ["kernel", "size", "baseline ms", "variant ms", "speed-up", "note"],
          rows,
        },
      ],
      figures,
      notes: nativeKernels()
        ? []
        : ["native kernels unavailable (no C compiler or RECSYS_NATIVE=0): native columns n/a"],
    };
  },
};
