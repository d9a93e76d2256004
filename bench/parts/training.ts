import { fitAls } from "../../src/engine/als";
import type { Interactions, ItemMeta } from "../../src/engine/types";
import { buildWeightedMatrix } from "../../src/engine/weighting";
import { generateSynthetic } from "../data/synthetic";
import { bySize } from "../lib/args";
import { tryImportExport } from "../lib/optional";
import { formatNumber, ratio } from "../lib/table";
import type { BenchContext, BenchPart, BenchSize, Cell, Figure, PartOutput } from "../lib/types";
import { measureTrainingStall } from "./training-stall";

type TrainModel = (
  input: { events: Interactions; items?: readonly (ItemMeta | undefined)[] },
  options?: { search?: boolean },
) => unknown;

const TRAIN_MODEL_MODULES = ["src/engine/train.ts", "src/engine/index.ts"];

interface Series {
  key: string;
  label: string;
  sizes: number[];
  run: (events: Interactions, items: ItemMeta[] | undefined) => unknown;
}

interface Measured {
  series: Series;
  interactions: number;
  users: number;
  items: number;
  seconds: number;
}

/**
 * The hyper-parameter search fits many candidate models, so the service's exact pipeline (search on) is timed
 * at the smaller sizes only; the fixed-configuration pipeline (split, fit, evaluate, refit) and ALS alone run
 * at every size.
 */
function seriesFor(size: BenchSize, trainModel: TrainModel | null): Series[] {
  const scale = bySize(size, {
    smoke: { all: [5_000, 10_000], search: [5_000] },
    default: { all: [100_000, 1_000_000], search: [100_000] },
    full: { all: [100_000, 1_000_000, 10_000_000], search: [100_000, 1_000_000] },
  });
  const out: Series[] = [];
  if (trainModel) {
    out.push({
      key: "trainModel",
      label: "trainModel, search on (as the service trains)",
      sizes: scale.search,
      run: (events, items) => trainModel({ events, ...(items ? { items } : {}) }),
    });
    out.push({
      key: "trainModelNoSearch",
      label: "trainModel, search off",
      sizes: scale.all,
      run: (events, items) => trainModel({ events, ...(items ? { items } : {}) }, { search: false }),
    });
  }
  out.push({
    key: "als",
    label: "ALS alone (64 factors, 15 sweeps)",
    sizes: scale.all,
    run: (events) => fitAls(buildWeightedMatrix(events)),
  });
  return out;
}

/**
 * Whether training stalls serving (the real service, on the embedded store or with `--postgres`), then
 * training time on synthetic data at growing sizes; each size's seconds per million interactions is divided
 * by the smallest size's, so a flat 1.00x column means linear growth.
 */
export const trainingPart: BenchPart = {
  name: "training",
  description:
    "/health latency while a 100k-item model trains and is published; training seconds per million interactions (linearity check)",
  async run(ctx: BenchContext): Promise<PartOutput> {
    const stall = await stallOutput(ctx);
    const linearity = await linearityOutput(ctx);
    return {
      tables: [...stall.tables, ...linearity.tables],
      figures: [...stall.figures, ...linearity.figures],
      notes: [...(stall.notes ?? []), ...(linearity.notes ?? [])],
    };
  },
};

/** The goal: no /health request waits this long while a model trains and is published. */
const STALL_GOAL_MS = 100;

async function stallOutput(ctx: BenchContext): Promise<PartOutput> {
  const size = bySize(ctx.size, {
    smoke: { products: 2_000, interactions: 10_000 },
    default: { products: 100_000, interactions: 100_000 },
    full: { products: 100_000, interactions: 1_000_000 },
  });
  const r = await measureTrainingStall({
    repoRoot: ctx.repoRoot,
    store: ctx.store,
    postgresAdminUrl: ctx.postgresAdminUrl,
    ...size,
    log: ctx.log,
  });
  const store = r.store === "postgres" ? "Postgres" : "embedded (PGlite)";
  const verdict = r.failed > 0 ? `${r.failed} failed` : r.worstMs < STALL_GOAL_MS ? "meets" : "misses";
  return {
    tables: [
      {
        title: "GET /health every 50 ms while a model trains, is stored and its snapshot swapped in",
        columns: [
          "store",
          "products",
          "interactions",
          "requests",
          "p50 ms",
          "p99 ms",
          "worst ms",
          "goal",
          "service: ticks > 100 ms late",
          "service: worst tick late ≤",
        ],
        rows: [
          [
            store,
            r.products,
            r.interactions,
            r.requests,
            r.p50Ms,
            r.p99Ms,
            r.worstMs,
            `${verdict} worst < ${STALL_GOAL_MS} ms`,
            r.serviceDelay.over100ms,
            `${r.serviceDelay.worstBucketSeconds * 1000} ms`,
          ],
        ],
        notes: [
          `training job (queued to completed, through the API): ${r.trainSeconds.toFixed(1)} s; snapshot served ${r.swapSeconds.toFixed(1)} s after; seeding through the batch route ${r.seedSeconds.toFixed(1)} s`,
          "requests leave on schedule whether or not the previous one answered, so a frozen event loop shows in every request it held up",
          "service columns: the service's own event-loop delay histogram over the same span (a 20 ms timer on its request thread), which a client waiting for CPU on a busy host does not inflate",
        ],
      },
    ],
    figures: [
      { key: `training.stall.${r.store}.worstMs`, value: r.worstMs, unit: "ms", better: "lower" },
      { key: `training.stall.${r.store}.p99Ms`, value: r.p99Ms, unit: "ms", better: "lower" },
    ],
  };
}

async function linearityOutput(ctx: BenchContext): Promise<PartOutput> {
  const trainModel = await tryImportExport<TrainModel>(ctx.repoRoot, TRAIN_MODEL_MODULES, "trainModel");
  const series = seriesFor(ctx.size, trainModel);
  const sizes = [...new Set(series.flatMap((s) => s.sizes))].sort((a, b) => a - b);
  const measured: Measured[] = [];
  for (const n of sizes) {
    const data = generateSynthetic({ interactions: n, seed: 11, withMeta: trainModel !== null });
    const { nUsers, nItems } = data.events;
    for (const s of series.filter((x) => x.sizes.includes(n))) {
      const started = performance.now();
      await s.run(data.events, data.items);
      const seconds = (performance.now() - started) / 1000;
      measured.push({ series: s, interactions: n, users: nUsers, items: nItems, seconds });
      ctx.log(`${s.label} on ${formatNumber(n)}: ${seconds.toFixed(2)} s`);
    }
  }

  const rows: Cell[][] = [];
  const figures: Figure[] = [];
  for (const s of series) {
    const points = measured.filter((m) => m.series === s);
    const base = points[0]!;
    const basePerM = base.seconds / (base.interactions / 1e6);
    for (const m of points) {
      const perM = m.seconds / (m.interactions / 1e6);
      rows.push([
        s.label,
        m.interactions,
        m.users,
        m.items,
        m.seconds,
        perM,
        `${formatNumber(basePerM)} at ${formatNumber(base.interactions)}`,
        ratio(perM, basePerM),
      ]);
      const key = `training.${s.key}.${m.interactions}`;
      figures.push({ key: `${key}.seconds`, value: m.seconds, unit: "s", better: "lower" });
      figures.push({ key: `${key}.secondsPerMillion`, value: perM, unit: "s/M", better: "lower" });
    }
  }
  if (!trainModel) rows.unshift(["trainModel", null, null, null, null, null, "not available yet", "-"]);
  return {
    tables: [
      {
        title: "Training time on synthetic interactions (power-law items, category tastes, sessions)",
        columns: [
          "pipeline",
          "interactions",
          "users",
          "items",
          "seconds",
          "s per M",
          "baseline s per M",
          "ratio",
        ],
        rows,
        notes: ["ratio = s per M at this size / s per M at the series' smallest size (1.00x = linear)"],
      },
    ],
    figures,
    notes: trainModel
      ? []
      : [`trainModel: not available yet: no export in ${TRAIN_MODEL_MODULES.join(" / ")}`],
  };
}
