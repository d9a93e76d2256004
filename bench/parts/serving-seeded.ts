/**
 * `bun bench/parts/serving-seeded.ts [--products N] [--interactions N] [--users N] [--sample N] [--seconds S]
 *  [--max-requests N] [--db NAME] [--reseed]`
 *
 * The serving figures of issue 7 at full size without the hours the batch route needs to ingest 1M events:
 * the tenant is written once straight into a named Postgres database (rows as the batch route would write
 * them) and trained once through the API (as the service trains); every later run reuses it, restarts the
 * service (so the snapshot load after a restart is measured on the first request), and drives each route
 * with autocannon on 127.0.0.1, 32 connections, bounded in time and requests, each right after a GET /health
 * run on the same server, which it is compared with. The load average is printed next to the figures.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import postgres from "postgres";
import { generateSynthetic } from "../data/synthetic";
import { ApiClient, publishedRoutes, registerTenant, trainAndWait } from "../lib/api";
import { type LoadRequest, type LoadResult, runLoad } from "../lib/load";
import { catalogueRecords, interactionRecords, productId, userId } from "../lib/records";
import { freePort, startChildServer } from "../lib/server";

const CONNECTIONS = 32;
const R = "/api/v1/recommendations";

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] !== undefined ? process.argv[i + 1]! : fallback;
}

const size = {
  products: Number(arg("products", "100000")),
  interactions: Number(arg("interactions", "1000000")),
  users: Number(arg("users", "40000")),
};
const sample = Number(arg("sample", "1000"));
const seconds = Number(arg("seconds", "10"));
const maxRequests = Number(arg("max-requests", "200000"));
const adminUrl = arg("admin-url", "postgres://postgres@127.0.0.1:5432/postgres");
const dbName = arg("db", `bench_serving_${size.products}_${size.interactions}`).replace(/[^a-z0-9_]/g, "_");
const markerFile = join(tmpdir(), `rs-${dbName}.json`);
const repoRoot = join(import.meta.dir, "..", "..");
const log = (m: string) => process.stderr.write(`  [serving-seeded] ${m}\n`);
const load1 = () => loadavg()[0]!.toFixed(2);

interface Marker {
  apiKey: string;
  accountId: number;
  trainSeconds: number;
  seedSeconds: number;
}

async function ensureDatabase(reseed: boolean): Promise<string> {
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  try {
    const [row] = await admin`select 1 as ok from pg_database where datname = ${dbName}`;
    if (row && reseed) await admin.unsafe(`drop database "${dbName}" with (force)`);
    if (!row || reseed) await admin.unsafe(`create database "${dbName}"`);
  } finally {
    await admin.end({ timeout: 1 });
  }
  const url = new URL(adminUrl);
  url.pathname = `/${dbName}`;
  return url.toString();
}

/** Rows as the batch route writes them, in a few large statements. */
async function seed(databaseUrl: string, accountId: number): Promise<void> {
  const data = generateSynthetic({
    interactions: size.interactions,
    nItems: size.products,
    nUsers: size.users,
    seed: 3,
    withMeta: true,
  });
  const { products, users } = catalogueRecords(data);
  const events = interactionRecords(data);
  const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
  try {
    const CHUNK = 20_000;
    for (let i = 0; i < products.length; i += CHUNK) {
      const part = products.slice(i, i + CHUNK);
      await sql`insert into products (account_id, external_id, name, price, category, brand, in_stock)
        select ${accountId}, * from unnest(${part.map((p) => p.externalId)}::text[], ${part.map((p) => p.name)}::text[],
          ${part.map((p) => String(p.price))}::text[]::float8[], ${part.map((p) => p.category)}::text[],
          ${part.map((p) => p.brand)}::text[], ${part.map((p) => String(p.inStock))}::text[]::boolean[])`;
    }
    for (let i = 0; i < users.length; i += CHUNK) {
      const part = users.slice(i, i + CHUNK).map((u) => u.externalId);
      await sql`insert into end_users (account_id, external_id) select ${accountId}, * from unnest(${part}::text[])`;
    }
    log(`catalogue and users written (load ${load1()})`);
    for (let i = 0; i < events.length; i += CHUNK) {
      const part = events.slice(i, i + CHUNK);
      await sql`insert into interactions (account_id, end_user_id, product_id, interaction_type, value, occurred_at)
        select ${accountId}, u.id, p.id, t.type, t.value, t.ts
        from unnest(${part.map((e) => e.external_user_id)}::text[], ${part.map((e) => e.external_product_id)}::text[],
          ${part.map((e) => e.interaction_type)}::text[], ${part.map((e) => String(e.value))}::text[]::float8[],
          ${part.map((e) => e.timestamp)}::timestamptz[]) as t(u, p, type, value, ts)
        join end_users u on u.account_id = ${accountId} and u.external_id = t.u
        join products p on p.account_id = ${accountId} and p.external_id = t.p`;
      if ((i / CHUNK) % 10 === 0) log(`interactions ${i + part.length}/${events.length}`);
    }
    await sql`analyze`;
  } finally {
    await sql.end({ timeout: 1 });
  }
}

interface SeededCase {
  key: string;
  label: string;
  requests: LoadRequest[];
  /** Warm-up requests; null: none (the row measures first requests). Default: the measured ones. */
  warmup?: LoadRequest[] | null;
}

/**
 * Each route's requests are made only when its turn comes (and dropped after), so the load generator's heap
 * does not carry every route's request list, which would slow it down for all of them.
 */
function routeCases(): (() => SeededCase)[] {
  const users = Array.from({ length: Math.min(sample, size.users) }, (_, i) =>
    userId(Math.floor((i * size.users) / Math.min(sample, size.users))),
  );
  const items = Array.from({ length: Math.min(sample, size.products) }, (_, i) =>
    productId(Math.floor((i * size.products) / Math.min(sample, size.products))),
  );
  const post = (path: string, body: (u: string) => unknown) =>
    users.map((u) => ({ method: "POST" as const, path, body: JSON.stringify(body(u)) }));
  // synthetic prices are 1 + (i % 100): `price < 2` keeps exactly 1% of the catalogue.
  const onePercent = { logic: "and", filters: [{ field: "price", op: "lt", value: 2 }] };
  return [
    () => ({
      key: "personalized",
      label: "POST personalized/query (hybrid, limit 20)",
      requests: post(`${R}/personalized/query`, (u) => ({ external_user_id: u, limit: 20 })),
    }),
    () => ({
      key: "personalizedAfresh",
      label: "POST personalized/query, ranked afresh",
      ...distinctAnswers(users, `${R}/personalized/query`, maxRequests),
    }),
    () => ({
      // Users outside the sample, each asked once: their history is read and folded in on the request.
      key: "personalizedFirst",
      label: "POST personalized/query, user's first request",
      requests: Array.from({ length: size.users }, (_, u) => userId(u))
        .filter((u) => !users.includes(u))
        .map((u) => ({
          method: "POST" as const,
          path: `${R}/personalized/query`,
          body: JSON.stringify({ external_user_id: u, limit: 20 }),
        })),
      warmup: null,
    }),
    () => ({
      key: "filtered1pct",
      label: "POST personalized/query, filter = 1%",
      requests: post(`${R}/personalized/query`, (u) => ({
        external_user_id: u,
        limit: 20,
        filters: onePercent,
      })),
    }),
    () => ({
      key: "similar",
      label: "GET products/external/{id}/similar (limit 20)",
      requests: items.map((p) => ({
        method: "GET" as const,
        path: `${R}/products/external/${p}/similar?limit=20`,
      })),
    }),
    () => ({
      key: "homepage",
      label: "POST ecommerce/homepage",
      requests: post(`${R}/ecommerce/homepage`, (u) => ({ external_user_id: u })),
    }),
    () => ({
      key: "category",
      label: "GET category/{category} (limit 20)",
      requests: Array.from({ length: 7 }, (_, c) => ({
        method: "GET" as const,
        path: `${R}/category/${encodeURIComponent(`root/cat${c}`)}?limit=20`,
      })),
    }),
  ];
}

async function main(): Promise<void> {
  const reseed = process.argv.includes("--reseed");
  const databaseUrl = await ensureDatabase(reseed || !existsSync(markerFile));
  let marker: Marker | undefined =
    existsSync(markerFile) && !reseed ? (JSON.parse(readFileSync(markerFile, "utf8")) as Marker) : undefined;
  if (marker === undefined) {
    const server = await startChildServer({ repoRoot, databaseUrl });
    try {
      const tenant = await registerTenant(server.baseUrl, await publishedRoutes(server.baseUrl), "seeded");
      let started = performance.now();
      await seed(databaseUrl, tenant.accountId);
      const seedSeconds = (performance.now() - started) / 1000;
      log(`seeded in ${seedSeconds.toFixed(0)} s; training through the API (load ${load1()})`);
      started = performance.now();
      await trainAndWait(tenant.client, 3_600_000);
      const trainSeconds = (performance.now() - started) / 1000;
      log(`trained in ${trainSeconds.toFixed(0)} s`);
      marker = { apiKey: tenant.apiKey, accountId: tenant.accountId, trainSeconds, seedSeconds };
      writeFileSync(markerFile, JSON.stringify(marker));
    } finally {
      await server.stop();
    }
  }
  // Restarts keep one DATA_DIR (as a deployment does), so the second restart may use the local artifact copy.
  const dataDir = join(tmpdir(), `rs-${dbName}-data`);
  mkdirSync(dataDir, { recursive: true });
  const restart = async () => {
    const s = await startChildServer({ repoRoot, databaseUrl, env: { DATA_DIR: dataDir } });
    const client = new ApiClient(s.baseUrl, marker!.apiKey);
    const rssBefore = s.rss();
    const started = performance.now();
    const first = await client.request("POST", `${R}/personalized/query`, {
      external_user_id: userId(0),
      limit: 20,
    });
    if (first.status !== 200)
      throw new Error(`first query answered ${first.status}: ${JSON.stringify(first.body)}`);
    return { server: s, firstMs: performance.now() - started, rssBefore, rssAfter: s.rss() };
  };
  const cold = await restart();
  await cold.server.stop();
  const warm = await restart();
  const server = warm.server;
  try {
    const client = new ApiClient(server.baseUrl, marker.apiKey);
    const times: number[] = [];
    for (let u = 1; u <= 5; u++) {
      const started = performance.now();
      await client.request("POST", `${R}/personalized/query`, { external_user_id: userId(u * 7), limit: 20 });
      times.push(performance.now() - started);
    }
    console.log(
      `# serving-seeded: ${size.products} products, ${size.interactions} interactions, ${size.users} users; sample ${sample} users/items; ${CONNECTIONS} connections, ${seconds} s or ${maxRequests} requests per run`,
    );
    console.log(
      `seed ${marker.seedSeconds.toFixed(0)} s (SQL), training ${marker.trainSeconds.toFixed(0)} s (API, default options)`,
    );
    console.log(
      `restart 1: first personalised query ${cold.firstMs.toFixed(0)} ms (includes loading the snapshot)`,
    );
    console.log(
      `restart 2 (same DATA_DIR): first personalised query ${warm.firstMs.toFixed(0)} ms; next five ${times.map((t) => t.toFixed(1)).join(", ")} ms`,
    );
    console.log(
      `server RSS ${(warm.rssBefore / 2 ** 20).toFixed(0)} MiB before the first query, ${(warm.rssAfter / 2 ** 20).toFixed(0)} MiB after: ${((warm.rssAfter - warm.rssBefore) / size.products).toFixed(0)} B/item`,
    );
    const run = async (
      requests: LoadRequest[],
      headers?: Record<string, string>,
      warmup: LoadRequest[] | null = requests,
    ): Promise<LoadResult> => {
      const common = { baseUrl: server.baseUrl, headers, connections: CONNECTIONS };
      if (warmup !== null) {
        // Every sampled user or item once first (at most a minute), so their first-time work (history read,
        // fold-in, HNSW searches) is not measured as if it were a repeated request; then 2 s at full load.
        const firstPass = Math.min(warmup.length, sample);
        await runLoad({
          ...common,
          requests: warmup.slice(0, firstPass),
          durationSeconds: 60,
          maxRequests: firstPass,
          once: true,
        });
        await runLoad({ ...common, requests: warmup, durationSeconds: 2, maxRequests });
      }
      return runLoad({
        ...common,
        requests,
        durationSeconds: seconds,
        // A row without warm-up measures first requests: each request is sent once.
        maxRequests: warmup === null ? Math.min(maxRequests, requests.length) : maxRequests,
        once: warmup === null,
      });
    };
    const row = (label: string, r: LoadResult, base: number) =>
      console.log(
        `${label.padEnd(48)} ${r.rps.toFixed(0).padStart(7)} req/s  ${(r.rps / base).toFixed(2)}x health  p50 ${r.p50Ms.toFixed(2).padStart(6)} ms  p99 ${r.p99Ms.toFixed(2).padStart(6)} ms  errors ${r.errors + r.non2xx}  load ${load1()}`,
      );
    const health = [{ method: "GET" as const, path: "/health" }];
    // The machine's speed drifts over minutes (shared cores), so each route is measured right after a
    // /health run of its own and compared with it, as well as with the mean of every /health run.
    const healthRuns: number[] = [];
    const results: [string, LoadResult, number][] = [];
    for (const makeCase of routeCases()) {
      Bun.gc(true); // the previous route's requests go before this one is measured
      const c = makeCase();
      const h = await run(health);
      healthRuns.push(h.rps);
      row("GET /health", h, h.rps);
      const r = await run(c.requests, { "x-api-key": marker.apiKey }, c.warmup);
      results.push([c.label, r, h.rps]);
      row(c.label, r, h.rps);
    }
    const after = await run(health);
    healthRuns.push(after.rps);
    row("GET /health (last)", after, after.rps);
    const base = healthRuns.reduce((a, b) => a + b, 0) / healthRuns.length;
    console.log(
      `health: mean ${base.toFixed(0)} req/s over ${healthRuns.length} runs (${Math.min(...healthRuns).toFixed(0)}–${Math.max(...healthRuns).toFixed(0)})`,
    );
    for (const [label, r, adjacent] of results)
      console.log(
        `  ${label}: ${(r.rps / adjacent).toFixed(2)}x the /health run before it, ${(r.rps / base).toFixed(2)}x the mean; p99 ${r.p99Ms.toFixed(2)} ms`,
      );
    await bareCeiling(client);
  } finally {
    await server.stop();
  }
}

/**
 * The same load against a bare `Bun.serve` answering a personalised answer's bytes: what the transport and
 * the load generator allow for a response of that size on this machine, next to its own tiny `GET`.
 */
async function bareCeiling(client: ApiClient): Promise<void> {
  const query = { external_user_id: userId(0), limit: 20 };
  const body = JSON.stringify(query);
  const answer = await client.request("POST", `${R}/personalized/query`, query);
  const dir = join(tmpdir(), `rs-bare-${process.pid}`);
  mkdirSync(dir, { recursive: true });
  const file = join(dir, "answer.json");
  writeFileSync(file, JSON.stringify(answer.body));
  const port = await freePort();
  const bare = Bun.spawn(
    [process.execPath, join(repoRoot, "bench", "lib", "bare-server.ts"), String(port), file],
    {
      stdout: "ignore",
      stderr: "inherit",
    },
  );
  try {
    const baseUrl = `http://127.0.0.1:${port}`;
    for (let tries = 0; ; tries++) {
      try {
        if ((await fetch(baseUrl)).ok) break;
      } catch (error) {
        if (tries > 100) throw error;
      }
      await Bun.sleep(50);
    }
    const bareRun = (requests: LoadRequest[]) =>
      runLoad({ baseUrl, requests, connections: CONNECTIONS, durationSeconds: seconds, maxRequests });
    await bareRun([{ method: "GET", path: "/" }]);
    const get = await bareRun([{ method: "GET", path: "/" }]);
    const post = await bareRun([{ method: "POST", path: "/", body }]);
    console.log(
      `bare Bun.serve on this machine (ceiling): GET ${get.rps.toFixed(0)} req/s; POST answering the same ${Buffer.byteLength(JSON.stringify(answer.body))} B answer ${post.rps.toFixed(0)} req/s = ${(post.rps / get.rps).toFixed(2)}x its GET (p99 ${post.p99Ms.toFixed(2)} ms)`,
    );
  } finally {
    bare.kill();
    await bare.exited;
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
process.exit(0);

/**
 * Personalised queries that the page cache cannot answer: each request carries its own `context.location`
 * (accepted, no effect on the ranking), so every answer is ranked, at the cost of a repeated user's
 * ordinary ranking (their cached history and fold-in). Warm-up requests use other locations.
 */
function distinctAnswers(
  users: readonly string[],
  path: string,
  count: number,
): { requests: LoadRequest[]; warmup: LoadRequest[] } {
  const make = (prefix: string, n: number) =>
    Array.from({ length: n }, (_, i) => ({
      method: "POST" as const,
      path,
      body: JSON.stringify({
        external_user_id: users[i % users.length],
        limit: 20,
        context: { location: `${prefix}${i}` },
      }),
    }));
  return { requests: make("m", count), warmup: make("w", Math.min(count, 50_000)) };
}
