import { sql } from "drizzle-orm";
import { generateSynthetic } from "../data/synthetic";
import {
  type ApiClient,
  publishedRoutes,
  registerTenant,
  requireRoute,
  waitForIngestionJob,
} from "../lib/api";
import { bySize } from "../lib/args";
import { startInProcessServer } from "../lib/in-process";
import { createFreshDatabase, postgresUnavailableReason } from "../lib/postgres";
import { catalogueRecords, type InteractionRecord, interactionRecords } from "../lib/records";
import { formatNumber, ratio } from "../lib/table";
import type { BenchContext, BenchPart, Cell, Figure, PartOutput } from "../lib/types";

const BATCH = 1000;
const TARGET = 0.5;

interface StoreFigures {
  routePerSecond: number;
  rawPerSecond: number;
  routeSeconds: number;
  rawSeconds: number;
  recordErrors: number;
}

/**
 * Interactions per second through POST /api/v1/ingestion/batch (1000 per request, sent back to back, timed
 * until the last job has finished) against a raw multi-row INSERT of the same rows into the same table
 * through the same store, on PGlite and on a throw-away Postgres database. The baseline is split around the
 * route pass (half before, half after) so neither side inserts into a larger table than the other.
 */
export const ingestionPart: BenchPart = {
  name: "ingestion",
  description:
    "interactions/s through the batch route vs raw multi-row INSERTs of the same rows (PGlite, Postgres)",
  async run(ctx: BenchContext): Promise<PartOutput> {
    const size = bySize(ctx.size, {
      smoke: { interactions: 2_000, products: 200, users: 100 },
      default: { interactions: 20_000, products: 2_000, users: 1_000 },
      full: { interactions: 200_000, products: 20_000, users: 10_000 },
    });
    const data = generateSynthetic({
      interactions: size.interactions,
      nItems: size.products,
      nUsers: size.users,
      seed: 5,
      withMeta: true,
    });
    const catalogue = catalogueRecords(data);
    const events = interactionRecords(data);

    const rows: Cell[][] = [];
    const figures: Figure[] = [];
    const notes: string[] = [];
    const record = (store: string, f: StoreFigures | string) => {
      if (typeof f === "string") {
        rows.push([store, null, null, null, f]);
        return;
      }
      const share = f.routePerSecond / f.rawPerSecond;
      rows.push([
        store,
        f.routePerSecond,
        f.rawPerSecond,
        ratio(f.routePerSecond, f.rawPerSecond),
        `${share >= TARGET ? "meets" : "below"} target ${TARGET * 100}%${f.recordErrors > 0 ? `; ${f.recordErrors} record errors` : ""}`,
      ]);
      figures.push({
        key: `ingestion.${store}.routePerSecond`,
        value: f.routePerSecond,
        unit: "interactions/s",
        better: "higher",
      });
      figures.push({
        key: `ingestion.${store}.rawInsertPerSecond`,
        value: f.rawPerSecond,
        unit: "rows/s",
        better: "higher",
      });
      figures.push({
        key: `ingestion.${store}.routeShareOfRaw`,
        value: share,
        unit: "ratio",
        better: "higher",
      });
    };

    const unreachable = await postgresUnavailableReason(ctx.postgresAdminUrl);
    // PGlite's start-up (tens of seconds on a loaded 2-core machine) would dominate the smoke run, which only
    // has to prove the harness works; the PGlite path differs from Postgres by one setting.
    if (ctx.size !== "smoke" || unreachable)
      record("pglite", await measureStore(ctx, undefined, catalogue, events));
    else notes.push("--smoke: PGlite left out (Postgres is reachable and exercises the same code)");
    if (unreachable) record("postgres", `not available: ${unreachable}`);
    else {
      const db = await createFreshDatabase(ctx.postgresAdminUrl, "ingest");
      try {
        record("postgres", await measureStore(ctx, db.url, catalogue, events));
      } finally {
        await db.drop();
      }
    }
    notes.push(
      `${formatNumber(events.length)} interactions (${formatNumber(size.products)} products, ${formatNumber(size.users)} users created first), ` +
        `${BATCH} per request/statement, one client, timed until the last job reported a final state`,
    );
    notes.push(
      "fairness: the raw baseline inserts the same rows into the same account, half before and half after the " +
        "route pass, so the route and the baseline face a table of the same average size",
    );
    return {
      tables: [
        {
          title: "Bulk ingestion throughput",
          columns: ["store", "route interactions/s", "raw INSERT rows/s", "route / raw", "verdict"],
          rows,
        },
      ],
      figures,
      notes,
    };
  },
};

async function measureStore(
  ctx: BenchContext,
  databaseUrl: string | undefined,
  catalogue: ReturnType<typeof catalogueRecords>,
  events: InteractionRecord[],
): Promise<StoreFigures | string> {
  const store = databaseUrl ? "postgres" : "pglite";
  const server = await startInProcessServer({
    repoRoot: ctx.repoRoot,
    ...(databaseUrl ? { databaseUrl } : {}),
  });
  try {
    const routes = await publishedRoutes(server.baseUrl);
    try {
      requireRoute(routes, "POST", "/api/v1/ingestion/batch");
      requireRoute(routes, "GET", "/api/v1/ingestion/batch/{job_id}");
    } catch (error) {
      return (error as Error).message;
    }
    const tenant = await registerTenant(server.baseUrl, routes, `ingest-${store}`);
    const client = tenant.client;
    ctx.log(`${store}: creating ${catalogue.products.length} products and ${catalogue.users.length} users`);
    for (let i = 0; i < Math.max(catalogue.products.length, catalogue.users.length); i += BATCH) {
      const job = await postBatch(
        client,
        catalogue.products.slice(i, i + BATCH),
        catalogue.users.slice(i, i + BATCH),
        [],
      );
      const done = await waitForIngestionJob(client, job, 300_000);
      if (done.status !== "completed")
        throw new Error(`catalogue batch ended ${done.status}: ${JSON.stringify(done.errors?.slice(0, 3))}`);
    }

    // The raw baseline runs half before and half after the route, into the same account: both passes then
    // insert into a table of the same average size (the route no longer faces a table the baseline doubled).
    const half = Math.ceil(events.length / BATCH / 2) * BATCH;
    ctx.log(`${store}: raw INSERT of ${half} rows (first half of the baseline)`);
    let rawSeconds = await rawInsert(server.deps, tenant.accountId, events.slice(0, half));

    ctx.log(`${store}: ${Math.ceil(events.length / BATCH)} batch requests`);
    const started = performance.now();
    const jobs: number[] = [];
    for (let i = 0; i < events.length; i += BATCH)
      jobs.push(await postBatch(client, [], [], events.slice(i, i + BATCH)));
    let recordErrors = 0;
    for (const job of jobs) {
      const done = await waitForIngestionJob(client, job, 600_000);
      if (done.status === "failed") throw new Error(`ingestion job ${job} failed: ${JSON.stringify(done)}`);
      recordErrors += Array.isArray(done.errors) ? done.errors.length : 0;
    }
    const routeSeconds = (performance.now() - started) / 1000;

    ctx.log(`${store}: raw INSERT of ${events.length - half} rows (second half of the baseline)`);
    rawSeconds += await rawInsert(server.deps, tenant.accountId, events.slice(half));
    return {
      routePerSecond: events.length / routeSeconds,
      rawPerSecond: events.length / rawSeconds,
      routeSeconds,
      rawSeconds,
      recordErrors,
    };
  } finally {
    await server.stop();
  }
}

async function postBatch(
  client: ApiClient,
  products: unknown[],
  users: unknown[],
  interactions: unknown[],
): Promise<number> {
  const body = await client.expect(
    "POST",
    "/api/v1/ingestion/batch",
    { products, users, interactions },
    [202],
  );
  return Number(body.jobId);
}

/**
 * The baseline: the same rows, ids already resolved, as 1000-row INSERT statements on the store's own
 * connection — what the hardware and database allow with no API, validation or job bookkeeping around it.
 */
async function rawInsert(
  deps: Awaited<ReturnType<typeof startInProcessServer>>["deps"],
  accountId: number,
  events: InteractionRecord[],
): Promise<number> {
  const { database } = deps;
  const idMap = async (table: "products" | "end_users") => {
    const rows = await database.rows<{ id: number | string; external_id: string }>(
      sql`select id, external_id from ${sql.raw(table)} where account_id = ${accountId}`,
    );
    return new Map(rows.map((r) => [r.external_id, Number(r.id)]));
  };
  const products = await idMap("products");
  const users = await idMap("end_users");
  const started = performance.now();
  for (let i = 0; i < events.length; i += BATCH) {
    const values = events.slice(i, i + BATCH).map((e) => {
      const user = users.get(e.external_user_id);
      const product = products.get(e.external_product_id);
      if (user === undefined || product === undefined)
        throw new Error(`raw insert: unknown ids in ${JSON.stringify(e)}`);
      return sql`(${accountId}, ${user}, ${product}, ${e.interaction_type}, ${e.value}, ${e.timestamp}::timestamptz)`;
    });
    await database.rows(
      sql`insert into interactions (account_id, end_user_id, product_id, interaction_type, value, occurred_at) values ${sql.join(values, sql`, `)}`,
    );
  }
  return (performance.now() - started) / 1000;
}
