import { fitAls } from "../../src/engine/als";
import type { Interactions, ItemMeta } from "../../src/engine/types";
import { buildWeightedMatrix } from "../../src/engine/weighting";
import { generateSynthetic } from "../data/synthetic";
import { bySize } from "../lib/args";
import { tryImportExport } from "../lib/optional";
import { formatNumber, ratio } from "../lib/table";
import type { BenchContext, BenchPart, Cell, Figure, PartOutput } from "../lib/types";

type TrainModel = (
  input: { events: Interactions; items?: ItemMeta[] },
  options?: Record<string, unknown>,
) => unknown;

const TRAIN_MODEL_MODULES = [
  "src/engine/train.ts",
  "src/engine/index.ts",
  "src/engine/model.ts",
  "src/engine/pipeline.ts",
];

interface Measured {
  label: string;
  interactions: number;
  users: number;
  items: number;
  seconds: number;
}

/**
 * Training time on synthetic data at growing sizes; each size's seconds per million interactions is divided by
 * the smallest size's, so a flat 1.00x column means linear growth.
 */
export const trainingPart: BenchPart = {
  name: "training",
  description: "training seconds and seconds per million interactions on synthetic data (linearity check)",
  async run(ctx: BenchContext): Promise<PartOutput> {
    const sizes = bySize(ctx.size, {
      smoke: [5_000, 10_000],
      default: [100_000, 1_000_000],
      full: [100_000, 1_000_000, 10_000_000],
    });
    const trainModel = await tryImportExport<TrainModel>(ctx.repoRoot, TRAIN_MODEL_MODULES, "trainModel");
    const measured: Measured[] = [];
    const notes: string[] = [];
    for (const n of sizes) {
      const t0 = performance.now();
      const data = generateSynthetic({ interactions: n, seed: 11, withMeta: trainModel !== null });
      const { nUsers, nItems } = data.events;
      ctx.log(
        `${formatNumber(n)} interactions generated in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
      );
      if (trainModel) {
        const started = performance.now();
        await trainModel({ events: data.events, ...(data.items ? { items: data.items } : {}) });
        const seconds = (performance.now() - started) / 1000;
        measured.push({
          label: "trainModel (full pipeline)",
          interactions: n,
          users: nUsers,
          items: nItems,
          seconds,
        });
        ctx.log(`trainModel on ${formatNumber(n)}: ${seconds.toFixed(2)} s`);
      }
      const started = performance.now();
      fitAls(buildWeightedMatrix(data.events));
      const seconds = (performance.now() - started) / 1000;
      measured.push({
        label: "ALS alone (64 factors, 15 sweeps)",
        interactions: n,
        users: nUsers,
        items: nItems,
        seconds,
      });
      ctx.log(`ALS on ${formatNumber(n)}: ${seconds.toFixed(2)} s`);
    }
    if (!trainModel) {
      notes.push(
        `trainModel: not available yet: no export in ${TRAIN_MODEL_MODULES.join(" / ")}; only the ALS stage is timed`,
      );
    }

    const rows: Cell[][] = [];
    const figures: Figure[] = [];
    for (const label of [...new Set(measured.map((m) => m.label))]) {
      const series = measured.filter((m) => m.label === label);
      const base = series[0]!;
      const basePerM = base.seconds / (base.interactions / 1e6);
      for (const m of series) {
        const perM = m.seconds / (m.interactions / 1e6);
        rows.push([
          label,
          m.interactions,
          m.users,
          m.items,
          m.seconds,
          perM,
          `${formatNumber(base.interactions)}: ${formatNumber(basePerM)}`,
          ratio(perM, basePerM),
        ]);
        const key = `training.${label.startsWith("trainModel") ? "trainModel" : "als"}.${m.interactions}`;
        figures.push({ key: `${key}.seconds`, value: m.seconds, unit: "s", better: "lower" });
        figures.push({ key: `${key}.secondsPerMillion`, value: perM, unit: "s/M", better: "lower" });
      }
    }
    if (!trainModel)
      rows.unshift(["trainModel (full pipeline)", null, null, null, null, null, "not available yet", "-"]);
    return {
      tables: [
        {
          title: "Training time on synthetic interactions (power-law items, category tastes, sessions)",
          columns: [
            "model",
            "interactions",
            "users",
            "items",
            "seconds",
            "s per M",
            "baseline s per M",
            "ratio",
          ],
          rows,
          notes: ["ratio = s per M at this size / s per M at the smallest size (1.00x = linear)"],
        },
      ],
      figures,
      notes,
    };
  },
};
