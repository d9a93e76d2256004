/**
 * Quality as served: the real service as a child process (embedded store, or Postgres given a database
 * URL), one tenant per data set. Each data set is split first (per-user 20% hold-out of user-item pairs,
 * users with ≥ 5, seed 42; or the order-independent hash split); the training part is sent through
 * POST /api/v1/ingestion/batch exactly as a shop's back end would, trained by POST /api/v1/pipeline/train,
 * and then POST /api/v1/recommendations/personalized/query (default strategy, limit 20) is called for every
 * held-out user. NDCG@10, Recall@20 and coverage@10 are computed from those answers, beside popularity and
 * EASE (λ = 200) fitted in this process on the very same training part, and the job's own reported figure.
 *   bun run bench/quality-served.ts [datasetsDir] [dataset,...] [--split hash] [--postgres <admin url>]
 */
import { join } from "node:path";
import { easeScores, fitEase, itemSupport } from "../src/engine/ease";
import {
  evaluateRanking,
  type HoldoutSplit,
  hashHoldoutSplit,
  heldOutSets,
  holdoutSplit,
  type RankingMetrics,
} from "../src/engine/evaluate";
import type { Csr } from "../src/engine/sparse";
import { EventType } from "../src/engine/types";
import { buildWeightedMatrix, selectEvents } from "../src/engine/weighting";
import { type LoadedDataset, loadRealDataset, REAL_DATASETS, type RealDatasetName } from "./data/loaders";
import {
  type ApiClient,
  publishedRoutes,
  registerTenant,
  trainAndWait,
  waitForIngestionJob,
} from "./lib/api";
import { createFreshDatabase } from "./lib/postgres";
import { startChildServer } from "./lib/server";

const BATCH = 1000;
const TYPE_NAMES = Object.fromEntries(Object.entries(EventType).map(([name, code]) => [code, name]));
/** Parallel route calls while measuring: enough to keep the service busy, few enough to stay a fair load. */
const QUERY_CONCURRENCY = 8;

export type SplitKind = "random" | "hash";

export interface ServedQualityRow {
  dataset: string;
  /** "served" (the route's answers), "ease-l200" and "popularity" (this process, same split), "job". */
  model: "served" | "ease-l200" | "popularity" | "job";
  ndcgAt10: number | null;
  recallAt20: number | null;
  coverageAt10: number | null;
  fitSeconds: number;
  evaluatedUsers: number;
  note?: string;
}

export interface ServedRun {
  dataset: string;
  split: SplitKind;
  rows: ServedQualityRow[];
  /** Products of the user's own training interactions found in the served top-20 (must be 0). */
  repeatedOwnItems: number;
  ingestSeconds: number;
  trainWallSeconds: number;
  queries: number;
  productErrors: number;
  interactionErrors: number;
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

/** The events at `idx` (all of them by default) as interaction bodies, in file order. */
export function interactionBodies(ds: LoadedDataset, idx?: Int32Array) {
  const e = ds.events;
  const n = idx?.length ?? e.user.length;
  const out = new Array(n);
  for (let j = 0; j < n; j++) {
    const i = idx ? idx[j]! : j;
    out[j] = {
      external_user_id: ds.userIds[e.user[i]!]!,
      external_product_id: ds.itemIds[e.item[i]!]!,
      interaction_type: TYPE_NAMES[e.type[i]!]!,
      value: e.value[i]!,
      timestamp: new Date(e.ts[i]!).toISOString(),
    };
  }
  return out;
}

/** One request at a time, each waited for: the service stores the events in file order. */
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

export function splitDataset(ds: LoadedDataset, kind: SplitKind): HoldoutSplit {
  return kind === "hash"
    ? hashHoldoutSplit(ds.events, {
        seed: 42,
        userKey: (u) => ds.userIds[u]!,
        itemKey: (i) => ds.itemIds[i]!,
      })
    : holdoutSplit(ds.events, { seed: 42 });
}

function metricsRow(
  dataset: string,
  model: ServedQualityRow["model"],
  m: RankingMetrics,
  fitSeconds: number,
): ServedQualityRow {
  const row: ServedQualityRow = {
    dataset,
    model,
    ndcgAt10: m.ndcgAt10,
    recallAt20: m.recallAt20,
    coverageAt10: m.coverageAt10,
    fitSeconds,
    evaluatedUsers: m.evaluatedUsers,
  };
  if (m.note) row.note = m.note;
  return row;
}

export async function runServedQualityBench(opts: {
  repoRoot: string;
  datasetsDir: string;
  datasets?: string[];
  split?: SplitKind;
  /** Absent: the embedded store. Else a Postgres server URL on which a throw-away database is made. */
  postgresAdminUrl?: string;
  log?: (message: string) => void;
}): Promise<ServedRun[]> {
  const log = opts.log ?? ((m: string) => process.stderr.write(`${m}\n`));
  const split = opts.split ?? "random";
  const names = (opts.datasets ?? [...REAL_DATASETS]) as RealDatasetName[];
  const db = opts.postgresAdminUrl ? await createFreshDatabase(opts.postgresAdminUrl, "quality") : null;
  const server = await startChildServer({
    repoRoot: opts.repoRoot,
    ...(db ? { databaseUrl: db.url } : {}),
  });
  const runs: ServedRun[] = [];
  try {
    const routes = await publishedRoutes(server.baseUrl);
    for (const name of names) {
      if (!REAL_DATASETS.includes(name))
        throw new Error(`unknown data set ${name}; known: ${REAL_DATASETS.join(", ")}`);
      const ds = loadRealDataset(opts.datasetsDir, name);
      const parts = splitDataset(ds, split);
      const train = buildWeightedMatrix(selectEvents(ds.events, parts.trainIdx));
      const held = heldOutSets(ds.events, parts, train);
      const rows: ServedQualityRow[] = [];

      // Baselines on the same training part, in this process.
      let t = performance.now();
      const pop = itemSupport(train);
      rows.push(
        metricsRow(
          name,
          "popularity",
          evaluateRanking(train, held, (_u, out) => out.set(pop)),
          (performance.now() - t) / 1000,
        ),
      );
      t = performance.now();
      const ease = fitEase(train, { lambda: 200, minSupport: 1, values: "binary" });
      const easeSeconds = (performance.now() - t) / 1000;
      const ones = new Float32Array(train.nCols).fill(1);
      rows.push(
        metricsRow(
          name,
          "ease-l200",
          evaluateRanking(train, held, (u, out) =>
            easeScores(ease, train.indices.subarray(train.indptr[u]!, train.indptr[u + 1]!), ones, out),
          ),
          easeSeconds,
        ),
      );

      // The service: training part in, train, then ask the route for every held-out user.
      const tenant = await registerTenant(server.baseUrl, routes, `quality-${name}`);
      const events = interactionBodies(ds, parts.trainIdx);
      log(
        `${name} (${split} split): sending ${ds.itemIds.length} products and ${events.length} interactions`,
      );
      t = performance.now();
      const productErrors = await sendAll(tenant.client, "products", productBodies(ds));
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
      const jm = job.metrics ?? model?.metrics ?? {};
      rows.push({
        dataset: name,
        model: "job",
        ndcgAt10: jm.ndcgAt10 ?? null,
        recallAt20: jm.recallAt20 ?? null,
        coverageAt10: jm.coverageAt10 ?? null,
        fitSeconds: Number(model?.trainingSeconds ?? Number.NaN),
        evaluatedUsers: Number(jm.evaluatedUsers ?? 0),
        note: `the job's figure on its own split of the training part; params ${JSON.stringify(summaryParams(model?.params))}`,
      });

      log(`${name}: trained in ${trainWallSeconds.toFixed(1)} s; querying ${held.size} users`);
      const served = await servedRankings(tenant.client, ds, [...held.keys()]);
      const itemOf = new Map(ds.itemIds.map((id, i) => [id, i]));
      const { metrics, repeatedOwnItems } = answerMetrics(train, held, (u) =>
        (served.get(u) ?? []).map((id) => itemOf.get(id) ?? -1),
      );
      rows.push(metricsRow(name, "served", metrics, trainWallSeconds));
      runs.push({
        dataset: name,
        split,
        rows,
        repeatedOwnItems,
        ingestSeconds,
        trainWallSeconds,
        queries: held.size,
        productErrors,
        interactionErrors,
      });
      log(`${name}: ${rows.map((r) => `${r.model} ${r.ndcgAt10?.toFixed(4)}`).join(", ")}`);
    }
  } finally {
    await server.stop();
    await db?.drop();
  }
  return runs;
}

/**
 * NDCG@10, Recall@20 and coverage@10 of the answers exactly as given: unlike `evaluateRanking`, nothing is
 * removed from them, so a product of the user's own history takes its slot and counts as a miss.
 */
export function answerMetrics(
  train: Csr,
  held: Map<number, Int32Array>,
  answerOf: (user: number) => number[],
): { metrics: RankingMetrics; repeatedOwnItems: number } {
  const covered = new Set<number>();
  let ndcg = 0;
  let recall = 0;
  let repeatedOwnItems = 0;
  for (const [u, rel] of held) {
    const relevant = new Set(rel);
    const own = new Set(train.indices.subarray(train.indptr[u]!, train.indptr[u + 1]!));
    const answer = answerOf(u).slice(0, 20);
    let dcg = 0;
    let hits = 0;
    for (let r = 0; r < answer.length; r++) {
      const item = answer[r]!;
      if (own.has(item)) repeatedOwnItems++;
      if (r < 10 && item >= 0) covered.add(item);
      if (!relevant.has(item)) continue;
      hits++;
      if (r < 10) dcg += 1 / Math.log2(r + 2);
    }
    let idcg = 0;
    for (let r = 0; r < Math.min(10, rel.length); r++) idcg += 1 / Math.log2(r + 2);
    ndcg += dcg / idcg;
    recall += hits / Math.min(20, rel.length);
  }
  const n = Math.max(1, held.size);
  return {
    metrics: {
      ndcgAt10: ndcg / n,
      recallAt20: recall / n,
      coverageAt10: covered.size / train.nCols,
      evaluatedUsers: held.size,
    },
    repeatedOwnItems,
  };
}

function summaryParams(params: Record<string, unknown> | undefined): Record<string, unknown> {
  if (!params) return {};
  const { primary, lambda, easeUserExponent, blend, als } = params as Record<string, any>;
  return {
    primary,
    lambda,
    easeUserExponent,
    blend,
    als: als ? { factors: als.factors, alpha: als.alpha } : undefined,
  };
}

/** The route's top 20 (external product ids, best first) per user, QUERY_CONCURRENCY requests at a time. */
async function servedRankings(
  client: ApiClient,
  ds: LoadedDataset,
  users: number[],
): Promise<Map<number, string[]>> {
  const out = new Map<number, string[]>();
  let next = 0;
  const worker = async () => {
    while (next < users.length) {
      const u = users[next++]!;
      const page = await client.expect(
        "POST",
        "/api/v1/recommendations/personalized/query",
        { external_user_id: ds.userIds[u]!, limit: 20 },
        [200],
      );
      out.set(
        u,
        (page.items as { externalId: string }[]).map((item) => item.externalId),
      );
    }
  };
  await Promise.all(Array.from({ length: QUERY_CONCURRENCY }, worker));
  return out;
}

export function formatServedTable(runs: ServedRun[]): string {
  const f = (x: number | null) => (x === null ? "n/a" : x.toFixed(4));
  const lines = [
    "| data set | split | model | NDCG@10 | Recall@20 | coverage@10 | s | users | note |",
    "|---|---|---|---|---|---|---|---|---|",
  ];
  for (const run of runs) {
    for (const r of run.rows) {
      const note = r.model === "served" ? `own items repeated: ${run.repeatedOwnItems}` : (r.note ?? "");
      lines.push(
        `| ${r.dataset} | ${run.split} | ${r.model} | ${f(r.ndcgAt10)} | ${f(r.recallAt20)} | ${f(r.coverageAt10)} | ${r.fitSeconds.toFixed(1)} | ${r.evaluatedUsers} | ${note} |`,
      );
    }
  }
  return lines.join("\n");
}

if (import.meta.main) {
  const args = process.argv.slice(2);
  const flag = (name: string) => {
    const i = args.indexOf(name);
    if (i < 0) return undefined;
    const [, value] = args.splice(i, 2);
    return value;
  };
  const split = (flag("--split") ?? "random") as SplitKind;
  const postgresAdminUrl = flag("--postgres");
  const datasetsDir = args[0] ?? "../shared/datasets";
  const datasets = args[1]?.split(",");
  const runs = await runServedQualityBench({
    repoRoot: join(import.meta.dir, ".."),
    datasetsDir,
    split,
    ...(datasets ? { datasets } : {}),
    ...(postgresAdminUrl ? { postgresAdminUrl } : {}),
  });
  console.log(formatServedTable(runs));
  process.exit(0);
}
