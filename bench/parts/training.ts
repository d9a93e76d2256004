import { fitAls } from "../../src/engine/als";
import type { Interactions, ItemMeta } from "../../src/engine/types";
import { buildWeightedMatrix } from "../../src/engine/weighting";
import { generateSynthetic } from "../data/synthetic";
import { bySize } from "../lib/args";
import { tryImportExport } from "../lib/optional";
import { formatNumber, ratio } from "../lib/table";
import type { BenchContext, BenchPart, BenchSize, Cell, Figure, PartOutput } from "../lib/types";

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
 * Training time on synthetic data at growing sizes; each size's seconds per million interactions is divided by
 * the smallest size's, so a flat 1.00x column means linear growth.
 */
export const trainingPart: BenchPart = {
  name: "training",
  description: "training seconds and seconds per million interactions on synthetic data (linearity check)",
  async run(ctx: BenchContext): Promise<PartOutput> {
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
  },
};
