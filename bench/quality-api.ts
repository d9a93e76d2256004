/**
 * Quality through the API: the real service as a child process, one tenant per data set, the data set sent
 * through POST /api/v1/ingestion/batch exactly as a shop's back end would (products from the item files,
 * interactions with their real type, value and time), trained through POST /api/v1/pipeline/train, and the
 * figures read back from the job status and GET /pipeline/models. The hold-out is the engine's own (per-user
 * 20% of distinct items, users with ≥ 5, seed 42, full ranking, training items excluded).
 *   bun run bench/quality-api.ts [datasetsDir] [dataset,...]
 */
import { join } from "node:path";
import { EventType } from "../src/engine/types";
import { type LoadedDataset, loadRealDataset, REAL_DATASETS, type RealDatasetName } from "./data/loaders";
import {
  type ApiClient,
  publishedRoutes,
  registerTenant,
  trainAndWait,
  waitForIngestionJob,
} from "./lib/api";
import { startChildServer } from "./lib/server";

const BATCH = 1000;
const TYPE_NAMES = Object.fromEntries(Object.entries(EventType).map(([name, code]) => [code, name]));

export interface ApiQualityRow {
  dataset: string;
  model: "through API";
  ndcgAt10: number | null;
  /** The API's model metrics carry no Recall@20. */
  recallAt20: number | null;
  coverageAt10: number | null;
  popularityNdcgAt10: number | null;
  fitSeconds: number;
  evaluatedUsers: number;
  ingestSeconds: number;
  trainWallSeconds: number;
  counts: { users: number; items: number; interactions: number };
  productErrors: number;
  interactionErrors: number;
  note: string;
}

export interface ProductBody {
  externalId: string;
  name: string;
  price: number;
  category: string;
  brand?: string;
  attributes?: Record<string, string | number | boolean>;
}

/**
 * The data set's catalogue as product bodies. MovieLens has no prices: every movie gets 1 (the API needs
 * a positive price; a constant carries no signal). REES46 products keep their listed price, so the ones
 * listed at ≤ 0 are refused by the API like any shop's bad record, and their events with them.
 */
export function productBodies(ds: LoadedDataset): ProductBody[] {
  return ds.itemIds.map((externalId, i) => {
    const meta = ds.items?.[i] ?? {};
    const category = (meta.categoryPath || "unknown").slice(0, 50);
    const leaf = category.split("/").pop() ?? "";
    const body: ProductBody = {
      externalId,
      // REES46 rows have no product name; a shop's would read like "brand + kind of product".
      name: (meta.name || [meta.brand, leaf].filter(Boolean).join(" ") || `product ${externalId}`).slice(
        0,
        200,
      ),
      price: meta.price ?? ds.listedPrice?.[i] ?? 1,
      category,
    };
    if (meta.brand) body.brand = meta.brand;
    if (meta.attributes) body.attributes = meta.attributes;
    return body;
  });
}

export function interactionBodies(ds: LoadedDataset) {
  const e = ds.events;
  const out = new Array(e.user.length);
  for (let i = 0; i < e.user.length; i++) {
    out[i] = {
      external_user_id: ds.userIds[e.user[i]!]!,
      external_product_id: ds.itemIds[e.item[i]!]!,
      interaction_type: TYPE_NAMES[e.type[i]!]!,
      value: e.value[i]!,
      timestamp: new Date(e.ts[i]!).toISOString(),
    };
  }
  return out;
}

/**
 * One request at a time, each waited for: the service then stores the events in file order, so the
 * hold-out draw (which walks users and their events in load order) is the one the direct engine run makes.
 */
async function sendAll(
  client: ApiClient,
  kind: "products" | "interactions",
  records: unknown[],
): Promise<number> {
  let errors = 0;
  for (let i = 0; i < records.length; i += BATCH) {
    const body = { products: [], users: [], interactions: [], [kind]: records.slice(i, i + BATCH) };
    const accepted = await client.expect("POST", "/api/v1/ingestion/batch", body, [202]);
    const done = await waitForIngestionJob(client, Number(accepted.jobId), 600_000);
    if (done.status === "failed") throw new Error(`ingestion job failed: ${done.failureReason}`);
    errors += Array.isArray(done.errors) ? done.errors.length : 0;
  }
  return errors;
}

export async function runApiQualityBench(opts: {
  repoRoot: string;
  datasetsDir: string;
  datasets?: string[];
  databaseUrl?: string;
  log?: (message: string) => void;
}): Promise<ApiQualityRow[]> {
  const log = opts.log ?? ((m: string) => process.stderr.write(`${m}\n`));
  const names = (opts.datasets ?? [...REAL_DATASETS]) as RealDatasetName[];
  const server = await startChildServer({
    repoRoot: opts.repoRoot,
    ...(opts.databaseUrl ? { databaseUrl: opts.databaseUrl } : {}),
  });
  const rows: ApiQualityRow[] = [];
  try {
    const routes = await publishedRoutes(server.baseUrl);
    for (const name of names) {
      const ds = loadRealDataset(opts.datasetsDir, name);
      const tenant = await registerTenant(server.baseUrl, routes, `quality-${name}`);
      const products = productBodies(ds);
      const events = interactionBodies(ds);
      log(`${name}: sending ${products.length} products and ${events.length} interactions`);
      let t = performance.now();
      const productErrors = await sendAll(tenant.client, "products", products);
      const interactionErrors = await sendAll(tenant.client, "interactions", events);
      const ingestSeconds = (performance.now() - t) / 1000;
      log(`${name}: ingested in ${ingestSeconds.toFixed(1)} s; training`);
      t = performance.now();
      const job = await trainAndWait(tenant.client, 1_800_000);
      const trainWallSeconds = (performance.now() - t) / 1000;
      const models = await tenant.client.expect("GET", "/api/v1/pipeline/models?limit=10", undefined, [200]);
      const model = (models as { modelId: number }[]).find((m) => m.modelId === job.modelId) as
        | Record<string, any>
        | undefined;
      const m = job.metrics ?? model?.metrics ?? {};
      const p = model?.params ?? {};
      rows.push({
        dataset: name,
        model: "through API",
        ndcgAt10: m.ndcgAt10 ?? null,
        recallAt20: m.recallAt20 ?? null,
        coverageAt10: m.coverageAt10 ?? null,
        popularityNdcgAt10: m.popularityNdcgAt10 ?? null,
        fitSeconds: Number(model?.trainingSeconds ?? Number.NaN),
        evaluatedUsers: Number(m.evaluatedUsers ?? 0),
        ingestSeconds,
        trainWallSeconds,
        counts: model?.counts ?? { users: 0, items: 0, interactions: 0 },
        productErrors,
        interactionErrors,
        note: `primary=${p.primary} lambda=${p.lambda} blend=${JSON.stringify(p.blend)}`,
      });
      log(`${name}: ${JSON.stringify(rows.at(-1))}`);
    }
  } finally {
    await server.stop();
  }
  return rows;
}

if (import.meta.main) {
  const datasetsDir = process.argv[2] ?? "../shared/datasets";
  const datasets = process.argv[3]?.split(",");
  const rows = await runApiQualityBench({
    repoRoot: join(import.meta.dir, ".."),
    datasetsDir,
    ...(datasets ? { datasets } : {}),
  });
  for (const r of rows) console.log(JSON.stringify(r));
}
