/**
 * What the engine sees on the direct path (the bench's loaders) and on the service path (the same data set
 * sent through the batch route, then read by the training loader), side by side: users, items, events,
 * distinct pairs, weight distribution, time span, and whether the event sequences and item metadata agree.
 * The service runs in this process so the loader can read its store.
 *   bun run bench/quality-inputs.ts [datasetsDir] [dataset]
 */
import { join } from "node:path";
import type { Interactions, ItemMeta } from "../src/engine/types";
import { DEFAULT_WEIGHTS, eventWeights } from "../src/engine/weighting";
import { loadTrainingData } from "../src/training/load-data";
import { loadRealDataset, type RealDatasetName } from "./data/loaders";
import { publishedRoutes, registerTenant, waitForIngestionJob } from "./lib/api";
import { startInProcessServer } from "./lib/in-process";
import { interactionBodies, productBodies } from "./quality-served";

export function inputStats(events: Interactions): Record<string, unknown> {
  const w = Float64Array.from(eventWeights(events, DEFAULT_WEIGHTS));
  const sorted = w.slice().sort();
  const q = (p: number) =>
    Number(sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!.toFixed(3));
  const pairs = new Set<number>();
  for (let i = 0; i < events.user.length; i++) pairs.add(events.user[i]! * events.nItems + events.item[i]!);
  const types: Record<number, number> = {};
  for (const t of events.type) types[t] = (types[t] ?? 0) + 1;
  let lo = Number.POSITIVE_INFINITY;
  let hi = Number.NEGATIVE_INFINITY;
  for (const t of events.ts) {
    lo = Math.min(lo, t);
    hi = Math.max(hi, t);
  }
  return {
    users: events.nUsers,
    items: events.nItems,
    events: events.user.length,
    pairs: pairs.size,
    types,
    weight: { min: q(0), p10: q(0.1), p50: q(0.5), p90: q(0.9), max: q(1) },
    days: Number(((hi - lo) / 86_400_000).toFixed(1)),
    from: new Date(lo).toISOString(),
  };
}

function metaKey(m: ItemMeta | undefined): string {
  if (!m) return "{}";
  const { name, categoryPath, brand, price, attributes, description } = m;
  return JSON.stringify({ name, categoryPath, brand, price, attributes, description });
}

if (import.meta.main) {
  const datasetsDir = process.argv[2] ?? "../shared/datasets";
  const name = (process.argv[3] ?? "movielens-latest-small") as RealDatasetName;
  const ds = loadRealDataset(datasetsDir, name);
  const server = await startInProcessServer({ repoRoot: join(import.meta.dir, "..") });
  try {
    const tenant = await registerTenant(server.baseUrl, await publishedRoutes(server.baseUrl), "inputs");
    for (const [kind, records] of [
      ["products", productBodies(ds)],
      ["interactions", interactionBodies(ds)],
    ] as const) {
      for (let i = 0; i < records.length; i += 1000) {
        const body = { [kind]: records.slice(i, i + 1000) };
        const accepted = await tenant.client.expect("POST", "/api/v1/ingestion/batch", body, [202]);
        await waitForIngestionJob(tenant.client, Number(accepted.jobId), 600_000);
      }
    }
    const svc = await loadTrainingData(server.deps.database, tenant.accountId);
    console.log("direct ", JSON.stringify(inputStats(ds.events)));
    console.log("service", JSON.stringify(inputStats(svc.events)));
    // Same events in the same order, compared by external ids (dense indices may differ).
    const svcItemExt = svc.externalIds;
    const n = Math.min(ds.events.user.length, svc.events.user.length);
    let firstDiff = -1;
    for (let i = 0; i < n && firstDiff < 0; i++) {
      if (
        ds.itemIds[ds.events.item[i]!] !== svcItemExt[svc.events.item[i]!] ||
        ds.events.user[i] !== svc.events.user[i] ||
        ds.events.value[i] !== svc.events.value[i] ||
        ds.events.ts[i] !== svc.events.ts[i] ||
        ds.events.type[i] !== svc.events.type[i]
      )
        firstDiff = i;
    }
    console.log(`event sequence: ${firstDiff < 0 ? "identical" : `differs first at event ${firstDiff}`}`);
    let sameIndex = 0;
    let metaDiff = 0;
    let example = "";
    const directIndex = new Map(ds.itemIds.map((id, i) => [id, i]));
    for (let i = 0; i < svcItemExt.length; i++) {
      if (ds.itemIds[i] === svcItemExt[i]) sameIndex++;
      const j = directIndex.get(svcItemExt[i]!) ?? -1;
      if (metaKey(ds.items?.[j]) !== metaKey(svc.items[i])) {
        metaDiff++;
        if (!example) example = `${metaKey(ds.items?.[j])} vs ${metaKey(svc.items[i])}`;
      }
    }
    console.log(`items at the same dense index: ${sameIndex}/${svcItemExt.length}`);
    console.log(`items whose metadata differs: ${metaDiff}${example ? `, e.g. ${example}` : ""}`);
  } finally {
    await server.stop();
  }
}
