import { existsSync } from "node:fs";
import { importExport } from "../lib/optional";
import { ratio } from "../lib/table";
import {
  type BenchContext,
  type BenchPart,
  type Cell,
  type Figure,
  NotAvailable,
  type PartOutput,
} from "../lib/types";

/** The row shape bench/quality.ts returns (one per data set and model). */
export interface QualityRow {
  dataset: string;
  model: string;
  ndcgAt10: number | null;
  recallAt20: number | null;
  coverageAt10: number | null;
  fitSeconds: number;
  evaluatedUsers: number;
  note?: string;
}

type RunQualityBench = (options: { datasetsDir: string; datasets?: string[] }) => Promise<QualityRow[]>;

/** Our model vs popularity vs EASE per real data set, same split, same process (bench/quality.ts). */
export const qualityPart: BenchPart = {
  name: "quality",
  description: "NDCG@10 / Recall@20 / coverage per data set: our model vs popularity vs EASE, same split",
  async run(ctx: BenchContext): Promise<PartOutput> {
    const runQualityBench = await importExport<RunQualityBench>(
      ctx.repoRoot,
      ["bench/quality.ts"],
      "runQualityBench",
    );
    if (ctx.size === "smoke") {
      // Each real data set trains the full pipeline (tens of seconds); the smoke run only proves the wiring.
      return {
        tables: [
          {
            title: "Recommendation quality",
            columns: ["status"],
            rows: [["--smoke: runQualityBench found; the real data sets run at the default and full sizes"]],
          },
        ],
        figures: [],
      };
    }
    if (!existsSync(ctx.datasetsDir)) {
      throw new NotAvailable(`data set folder ${ctx.datasetsDir} not found (use --datasets <dir>)`);
    }
    ctx.log(`runQualityBench on ${ctx.datasetsDir}`);
    return qualityOutput(await runQualityBench({ datasetsDir: ctx.datasetsDir }));
  },
};

const isEase = (row: QualityRow) => /ease/i.test(row.model);
const isPopularity = (row: QualityRow) => /popularity/i.test(row.model);

/** One row per data set and model, each metric next to EASE's and popularity's on the same split. */
export function qualityOutput(rows: QualityRow[]): PartOutput {
  const figures: Figure[] = [];
  const body: Cell[][] = rows.map((row) => {
    const same = rows.filter((r) => r.dataset === row.dataset);
    const ease = same.find(isEase);
    const pop = same.find(isPopularity);
    for (const metric of ["ndcgAt10", "recallAt20", "coverageAt10"] as const) {
      const value = row[metric];
      if (value !== null) {
        figures.push({
          key: `quality.${row.dataset}.${row.model}.${metric}`,
          value,
          unit: "",
          better: "higher",
        });
      }
    }
    figures.push({
      key: `quality.${row.dataset}.${row.model}.fitSeconds`,
      value: row.fitSeconds,
      unit: "s",
      better: "lower",
    });
    return [
      row.dataset,
      row.model,
      row.ndcgAt10,
      ratio(row.ndcgAt10, ease?.ndcgAt10),
      ratio(row.ndcgAt10, pop?.ndcgAt10),
      row.recallAt20,
      ratio(row.recallAt20, ease?.recallAt20),
      row.coverageAt10,
      row.fitSeconds,
      row.evaluatedUsers,
      row.note ?? "",
    ];
  });
  return {
    tables: [
      {
        title:
          "Recommendation quality (per-user 20% hold-out, seed 42, full ranking, training items excluded)",
        columns: [
          "data set",
          "model",
          "NDCG@10",
          "÷ EASE",
          "÷ popularity",
          "Recall@20",
          "÷ EASE",
          "coverage@10",
          "fit s",
          "users",
          "note",
        ],
        rows: body,
        notes: ["production = trainModel as the service runs it; ÷ = this row's metric over the baseline's"],
      },
    ],
    figures,
  };
}
