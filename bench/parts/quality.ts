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
  type Table,
} from "../lib/types";

type RunQualityBench = (options: { datasetsDir: string; datasets?: string[] }) => Promise<unknown>;

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
    if (!existsSync(ctx.datasetsDir))
      throw new NotAvailable(`data set folder ${ctx.datasetsDir} not found (--datasets)`);
    const datasets = ctx.size === "smoke" ? ["movielens-100k"] : undefined;
    ctx.log(`running runQualityBench on ${datasets?.join(", ") ?? "every data set"}`);
    const result = await runQualityBench({ datasetsDir: ctx.datasetsDir, ...(datasets ? { datasets } : {}) });
    return qualityOutput(result);
  },
};

interface QualityRow {
  dataset: string;
  model: string;
  [metric: string]: unknown;
}

/** Accepts the tables runQualityBench prints, or its raw rows, and adds each model's ratio to EASE. */
export function qualityOutput(result: unknown): PartOutput {
  const r = result as
    | { tables?: Table[]; rows?: QualityRow[]; figures?: Figure[]; notes?: string[] }
    | QualityRow[];
  const rows: QualityRow[] = Array.isArray(r) ? r : (r.rows ?? []);
  const tables: Table[] = Array.isArray(r) ? [] : [...(r.tables ?? [])];
  const figures: Figure[] = Array.isArray(r) ? [] : [...(r.figures ?? [])];
  if (rows.length > 0 && tables.length === 0) tables.push(rowsTable(rows));
  for (const row of rows) {
    for (const [k, v] of Object.entries(row)) {
      if (typeof v !== "number" || !Number.isFinite(v)) continue;
      const lower = /seconds|time|ms$/i.test(k);
      figures.push({
        key: `quality.${row.dataset}.${row.model}.${k}`,
        value: v,
        unit: lower ? "s" : "",
        better: lower ? "lower" : "higher",
      });
    }
  }
  return { tables, figures, notes: Array.isArray(r) ? [] : (r.notes ?? []) };
}

function rowsTable(rows: QualityRow[]): Table {
  const metrics = [...new Set(rows.flatMap((row) => Object.keys(row)))].filter(
    (k) => k !== "dataset" && k !== "model" && rows.some((row) => typeof row[k] === "number"),
  );
  const ndcgKey = metrics.find((m) => /ndcg/i.test(m));
  const easeNdcg = (dataset: string) => {
    const ease = rows.find((row) => row.dataset === dataset && /ease/i.test(row.model));
    return ndcgKey && ease ? (ease[ndcgKey] as number) : null;
  };
  const columns = ["data set", "model", ...metrics, ...(ndcgKey ? [`${ndcgKey} vs EASE`] : [])];
  const body: Cell[][] = rows.map((row) => [
    row.dataset,
    row.model,
    ...metrics.map((m) => (typeof row[m] === "number" ? (row[m] as number) : String(row[m] ?? ""))),
    ...(ndcgKey ? [ratio(row[ndcgKey] as number, easeNdcg(row.dataset))] : []),
  ]);
  return {
    title: "Recommendation quality (per-user 20% hold-out, seed 42, full ranking)",
    columns,
    rows: body,
  };
}
