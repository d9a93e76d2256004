import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Interactions, ItemMeta } from "../../src/engine/types";
import { generateSynthetic } from "../data/synthetic";
import { bySize } from "../lib/args";
import { importExport } from "../lib/optional";
import { formatNumber, ratio } from "../lib/table";
import type { BenchContext, BenchPart, Figure, PartOutput } from "../lib/types";

type TrainModel = (
  input: { events: Interactions; items: readonly (ItemMeta | undefined)[] },
  options: { search: boolean },
) => { model: unknown };

const SERIALIZE_MODULES = ["src/engine/index.ts", "src/engine/serialize.ts"];

interface Probe {
  rssBefore: number;
  rssAfter: number;
  heapBefore: number;
  heapAfter: number;
  loadMs: number;
}

/**
 * What one tenant's trained model costs: its serialized size (what is stored and read back after a
 * restart) and the resident memory a fresh process gains by loading it, per tenant and per item.
 */
export const memoryPart: BenchPart = {
  name: "memory",
  description: "serialized and resident bytes per tenant snapshot and per item; load time after a restart",
  async run(ctx: BenchContext): Promise<PartOutput> {
    const serializeModel = await importExport<(model: unknown) => Uint8Array>(
      ctx.repoRoot,
      SERIALIZE_MODULES,
      "serializeModel",
    );
    const trainModel = await importExport<TrainModel>(ctx.repoRoot, ["src/engine/train.ts"], "trainModel");
    const modulePath = SERIALIZE_MODULES.find((m) => m.endsWith("index.ts"))!;
    await importExport(ctx.repoRoot, SERIALIZE_MODULES, "deserializeModel");
    const sizes = bySize(ctx.size, {
      smoke: [{ interactions: 5_000, items: 500 }],
      default: [
        { interactions: 100_000, items: 10_000 },
        { interactions: 300_000, items: 30_000 },
      ],
      full: [
        { interactions: 100_000, items: 10_000 },
        { interactions: 1_000_000, items: 100_000 },
      ],
    });
    const dir = mkdtempSync(join(tmpdir(), "rs-bench-mem-"));
    const rows = [];
    const figures: Figure[] = [];
    try {
      for (const size of sizes) {
        const data = generateSynthetic({
          interactions: size.interactions,
          nItems: size.items,
          seed: 9,
          withMeta: true,
        });
        ctx.log(`training a ${formatNumber(size.items)}-item model`);
        const trained = trainModel({ events: data.events, items: data.items ?? [] }, { search: false });
        const bytes = serializeModel(trained.model);
        const file = join(dir, `model-${size.items}.bin`);
        writeFileSync(file, bytes);
        const probe = await runProbe(join(ctx.repoRoot, modulePath), file);
        const resident = probe.rssAfter - probe.rssBefore;
        const n = data.events.nItems;
        rows.push([
          formatNumber(n),
          formatNumber(data.events.nUsers),
          bytes.length / 2 ** 20,
          bytes.length / n,
          resident / 2 ** 20,
          resident / n,
          ratio(resident, bytes.length),
          probe.loadMs,
        ]);
        const key = `memory.items${n}`;
        figures.push({
          key: `${key}.serializedBytesPerItem`,
          value: bytes.length / n,
          unit: "B",
          better: "lower",
        });
        figures.push({ key: `${key}.residentBytesPerItem`, value: resident / n, unit: "B", better: "lower" });
        figures.push({ key: `${key}.residentMiB`, value: resident / 2 ** 20, unit: "MiB", better: "lower" });
        figures.push({ key: `${key}.loadMs`, value: probe.loadMs, unit: "ms", better: "lower" });
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    return {
      tables: [
        {
          title: "Engine model per tenant (trained on synthetic data, search off)",
          columns: [
            "items",
            "users",
            "serialized MiB",
            "serialized B/item",
            "resident MiB",
            "resident B/item",
            "resident / serialized",
            "load ms",
          ],
          rows,
          notes: [
            "resident = RSS of a fresh process after deserializing minus before (both after a full GC); load ms = read + deserialize",
            "the service's snapshot adds product and user id tables joined from the database at load time (see serving notes for the server's RSS)",
          ],
        },
      ],
      figures,
    };
  },
};

async function runProbe(modulePath: string, file: string): Promise<Probe> {
  const child = Bun.spawn(
    [
      process.execPath,
      join(import.meta.dir, "..", "lib", "rss-probe.ts"),
      modulePath,
      "deserializeModel",
      file,
    ],
    { stdout: "pipe", stderr: "pipe" },
  );
  const [out, err, code] = await Promise.all([
    new Response(child.stdout).text(),
    new Response(child.stderr).text(),
    child.exited,
  ]);
  if (code !== 0) throw new Error(`rss probe exited ${code}: ${err.slice(-1000)}`);
  return JSON.parse(out.trim().split("\n").pop()!) as Probe;
}
