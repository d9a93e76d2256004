import { importExport } from "../lib/optional";
import type { KernelPair, MicroSizes } from "./kernels";
import { timeMs } from "./kernels";

type Group = { logic?: "and" | "or"; filters: { field: string; op: string; value: unknown }[] };
type CompileFilters = (
  group: Group | undefined,
  table: unknown,
  attributes?: unknown,
) => ((i: number) => boolean) | null;
type BuildItemTable = (rows: unknown[]) => { size: number };

/** Where each lives now, then where it lived before (bench compare runs older commits too). */
const MODULES = {
  filters: ["src/modules/recommendations/ranking/filters.ts", "src/modules/recommendations/filters.ts"],
  table: ["src/modules/recommendations/serving/item-table.ts", "src/modules/recommendations/item-table.ts"],
};

/**
 * Filter compilation (once per request) and its cost over the whole catalogue, next to a hand-written
 * predicate over the same typed array: the floor a compiled filter can reach.
 */
export async function filterPairs(repoRoot: string, s: MicroSizes): Promise<KernelPair[]> {
  const compileFilters = await importExport<CompileFilters>(repoRoot, MODULES.filters, "compileFilters");
  const buildItemTable = await importExport<BuildItemTable>(repoRoot, MODULES.table, "buildItemTable");
  const n = s.items;
  const rows = Array.from({ length: n }, (_, i) => ({
    externalId: `p${i}`,
    name: `item ${i}`,
    price: 1 + (i % 100),
    category: `root/cat${i % 7}/cat${i % 40}`,
    brand: `brand${i % 50}`,
    inStock: i % 10 !== 9,
    attributes: null,
    popularity: 0,
    rating: null,
  }));
  const table = buildItemTable(rows) as { prices: Float64Array; size: number };
  const group: Group = {
    logic: "and",
    filters: [
      { field: "price", op: "lt", value: 50 },
      { field: "category", op: "eq", value: "root/cat3" },
      { field: "in_stock", op: "eq", value: true },
    ],
  };
  const compile = await timeMs(() => compileFilters(group, table), s.minCpuNs);
  const predicate = compileFilters(group, table)!;
  let hits = 0;
  const apply = await timeMs(() => {
    hits = 0;
    for (let i = 0; i < n; i++) if (predicate(i)) hits++;
  }, s.minCpuNs);
  const prices = table.prices;
  const handWritten = await timeMs(() => {
    let h = 0;
    for (let i = 0; i < n; i++) if (prices[i]! < 50) h++;
    return h;
  }, s.minCpuNs);
  return [
    {
      kernel: "filter compile (3 conditions)",
      size: `${n} items`,
      baselineLabel: "TS",
      baselineMs: compile,
      variantLabel: "-",
      variantMs: null,
      note: "once per request",
    },
    {
      kernel: "filter applied to every item",
      size: `${n} items, ${hits} match`,
      baselineLabel: "price-only loop",
      baselineMs: handWritten,
      variantLabel: "compiled",
      variantMs: apply,
      note: "speed-up < 1: cost of the 3-condition compiled predicate over a bare 1-condition loop",
    },
  ];
}
