/**
 * Quality on the real data sets with the shared protocol (per-user 20% hold-out of user-item pairs, users
 * with ≥ 5, seed 42, full ranking, training items excluded): popularity, EASE λ=200 and the production
 * model (trainModel, which carves its validation split out of the same training part).
 *   bun run bench/quality.ts [datasetsDir] [dataset,...]
 */

import { fitAls } from "../src/engine/als";
import { easeScores, fitEase, itemSupport } from "../src/engine/ease";
import { evaluateRanking, heldOutSets, holdoutSplit, type RankingMetrics } from "../src/engine/evaluate";
import { trainModel } from "../src/engine/train";
import { buildWeightedMatrix, selectEvents } from "../src/engine/weighting";
import { loadRealDataset, REAL_DATASETS, type RealDatasetName } from "./data/loaders";
import { generateSynthetic } from "./data/synthetic";

export interface QualityRow {
  dataset: string;
  model: "popularity" | "ease-l200" | "production";
  ndcgAt10: number | null;
  recallAt20: number | null;
  coverageAt10: number | null;
  fitSeconds: number;
  evaluatedUsers: number;
  note?: string;
}

function row(dataset: string, model: QualityRow["model"], m: RankingMetrics, fitSeconds: number): QualityRow {
  const r: QualityRow = {
    dataset,
    model,
    ndcgAt10: m.ndcgAt10,
    recallAt20: m.recallAt20,
    coverageAt10: m.coverageAt10,
    fitSeconds,
    evaluatedUsers: m.evaluatedUsers,
  };
  if (m.note) r.note = m.note;
  return r;
}

export async function runQualityBench(opts: {
  datasetsDir: string;
  datasets?: string[];
}): Promise<QualityRow[]> {
  const names = (opts.datasets ?? [...REAL_DATASETS]) as RealDatasetName[];
  const rows: QualityRow[] = [];
  for (const name of names) {
    if (!REAL_DATASETS.includes(name))
      throw new Error(`unknown data set ${name}; known: ${REAL_DATASETS.join(", ")}`);
    const data = loadRealDataset(opts.datasetsDir, name);
    const split = holdoutSplit(data.events, { seed: 42 });
    const train = buildWeightedMatrix(selectEvents(data.events, split.trainIdx));
    const held = heldOutSets(data.events, split, train);

    let t = performance.now();
    const pop = itemSupport(train);
    const popSeconds = (performance.now() - t) / 1000;
    rows.push(
      row(
        name,
        "popularity",
        evaluateRanking(train, held, (_u, out) => out.set(pop)),
        popSeconds,
      ),
    );

    // Reference EASE: binary X over every item with a training interaction, λ = 200, no blending.
    t = performance.now();
    const ease = fitEase(train, { lambda: 200, minSupport: 1, values: "binary" });
    const easeSeconds = (performance.now() - t) / 1000;
    const ones = new Float32Array(train.nCols).fill(1);
    const easeMetrics = evaluateRanking(train, held, (u, out) =>
      easeScores(ease, train.indices.subarray(train.indptr[u]!, train.indptr[u + 1]!), ones, out),
    );
    rows.push(row(name, "ease-l200", easeMetrics, easeSeconds));

    const result = trainModel({ events: data.events, items: data.items }, { seed: 42 });
    const m = result.metrics;
    const prod: QualityRow = {
      dataset: name,
      model: "production",
      ndcgAt10: m.ndcgAt10,
      recallAt20: m.recallAt20,
      coverageAt10: m.coverageAt10,
      fitSeconds: result.trainingSeconds,
      evaluatedUsers: m.evaluatedUsers,
      note: `primary=${result.params["primary"]} lambda=${result.params["lambda"]} blend=${JSON.stringify(result.params["blend"])}`,
    };
    rows.push(prod);
  }
  return rows;
}

export function formatQualityTable(rows: QualityRow[]): string {
  const f = (x: number | null) => (x === null ? "n/a" : x.toFixed(4));
  const lines = [
    "| data set | model | NDCG@10 | Recall@20 | coverage@10 | fit s | users | note |",
    "|---|---|---|---|---|---|---|---|",
  ];
  for (const r of rows) {
    lines.push(
      `| ${r.dataset} | ${r.model} | ${f(r.ndcgAt10)} | ${f(r.recallAt20)} | ${f(r.coverageAt10)} | ${r.fitSeconds.toFixed(2)} | ${r.evaluatedUsers} | ${r.note ?? ""} |`,
    );
  }
  return lines.join("\n");
}

if (import.meta.main && process.argv[2] === "--timing") {
  const sizes = (process.argv[3] ?? "100000,1000000").split(",").map(Number);
  for (const r of runTrainingTimeBench(sizes, { pipeline: process.argv[4] !== "--als-only" }))
    console.log(JSON.stringify(r));
} else if (import.meta.main) {
  const datasetsDir = process.argv[2] ?? "../shared/datasets";
  const datasets = process.argv[3]?.split(",");
  const rows = await runQualityBench(datasets ? { datasetsDir, datasets } : { datasetsDir });
  console.log(formatQualityTable(rows));
}

export interface TrainingTimeRow {
  interactions: number;
  users: number;
  items: number;
  primary: string;
  /** Whole trainModel: validation search, evaluation fit, refit on all data, ANN build. */
  pipelineSeconds: number;
  /** One ALS fit (k=64, 15 iterations) on all interactions: the part that scales with interactions. */
  alsSeconds: number;
  alsSecondsPerMillion: number;
}

/** Training time on synthetic data of the given sizes (e.g. 1e5, 1e6, 1e7). */
export function runTrainingTimeBench(sizes: number[], opts: { pipeline?: boolean } = {}): TrainingTimeRow[] {
  const rows: TrainingTimeRow[] = [];
  for (const n of sizes) {
    const { events, items } = generateSynthetic({ interactions: n, withMeta: true });
    let t = performance.now();
    fitAls(buildWeightedMatrix(events));
    const alsSeconds = (performance.now() - t) / 1000;
    let pipelineSeconds = Number.NaN;
    let primary = "n/a";
    if (opts.pipeline !== false) {
      t = performance.now();
      const r = trainModel({ events, items: items ?? [] }, { seed: 42 });
      pipelineSeconds = (performance.now() - t) / 1000;
      primary = String(r.params["primary"]);
    }
    rows.push({
      interactions: n,
      users: events.nUsers,
      items: events.nItems,
      primary,
      pipelineSeconds,
      alsSeconds,
      alsSecondsPerMillion: alsSeconds / (n / 1e6),
    });
  }
  return rows;
}
