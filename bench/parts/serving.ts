import { generateSynthetic, type SyntheticDataset } from "../data/synthetic";
import {
  type ApiClient,
  publishedRoutes,
  registerTenant,
  routeMissing,
  trainAndWait,
  waitForIngestionJob,
} from "../lib/api";
import { bySize } from "../lib/args";
import { type LoadRequest, type LoadResult, runLoad } from "../lib/load";
import { createFreshDatabase, type FreshDatabase, postgresUnavailableReason } from "../lib/postgres";
import { catalogueRecords, interactionRecords, productId, userId } from "../lib/records";
import { type RunningServer, startChildServer } from "../lib/server";
import { formatNumber, ratio } from "../lib/table";
import {
  type BenchContext,
  type BenchPart,
  type Cell,
  type Figure,
  NotAvailable,
  type PartOutput,
} from "../lib/types";

const CONNECTIONS = 32;
const BATCH = 1000;
const SAMPLE = 1000;

interface RouteCase {
  key: string;
  label: string;
  /** The route as published in OpenAPI, for the availability check. */
  method: "GET" | "POST";
  route: string;
  requests: LoadRequest[];
  /** Warm-up requests when they must differ from the measured ones (default: the same). */
  warmup?: LoadRequest[];
  /**
   * The bar the route is held to: `throughput` for the personalised query (≥ 50% of health throughput and
   * p99 < 10 ms), `latency` for its filtered twin (the same p99 under 10 ms).
   */
  target?: "throughput" | "latency";
}

/**
 * Throughput and latency of every recommendation route under a real load generator (autocannon, 32
 * connections, bounded in time and requests) against the real service in a child process on 127.0.0.1,
 * next to GET /health on the same server in the same run.
 */
export const servingPart: BenchPart = {
  name: "serving",
  description: `req/s, p50, p99 per recommendation route vs GET /health, ${CONNECTIONS} connections, 127.0.0.1`,
  async run(ctx: BenchContext): Promise<PartOutput> {
    const size = bySize(ctx.size, {
      smoke: { products: 300, interactions: 3_000, users: 150, seconds: 1, maxRequests: 300, warmup: 0 },
      default: {
        products: 10_000,
        interactions: 100_000,
        users: 4_000,
        seconds: 5,
        maxRequests: 100_000,
        warmup: 1,
      },
      full: {
        products: 100_000,
        interactions: 1_000_000,
        users: 40_000,
        seconds: 10,
        maxRequests: 500_000,
        warmup: 2,
      },
    });
    const notes: string[] = [];
    const unreachable = await postgresUnavailableReason(ctx.postgresAdminUrl);
    let db: FreshDatabase | undefined;
    if (unreachable) notes.push(`store: PGlite (${unreachable})`);
    else db = await createFreshDatabase(ctx.postgresAdminUrl, "serving");
    notes.push(
      `store: ${db ? "Postgres (fresh database)" : "PGlite"}; tenant: ${formatNumber(size.products)} products, ${formatNumber(size.interactions)} interactions, ${formatNumber(size.users)} users`,
    );

    let server: RunningServer | undefined;
    try {
      server = await startChildServer({ repoRoot: ctx.repoRoot, ...(db ? { databaseUrl: db.url } : {}) });
      const baseUrl = server.baseUrl;
      const routes = await publishedRoutes(baseUrl);
      // Each measured run follows an unrecorded warm-up on the same requests, so JIT compilation, caches and
      // lazily loaded snapshots are not charged to the route.
      const load = async (
        requests: LoadRequest[],
        headers?: Record<string, string>,
        warmup: LoadRequest[] = requests,
      ) => {
        const common = { baseUrl, headers, connections: CONNECTIONS };
        if (size.warmup > 0)
          await runLoad({
            ...common,
            requests: warmup,
            durationSeconds: size.warmup,
            maxRequests: size.maxRequests,
          });
        return runLoad({ ...common, requests, durationSeconds: size.seconds, maxRequests: size.maxRequests });
      };
      const health = [{ method: "GET" as const, path: "/health" }];

      ctx.log("GET /health (baseline, before)");
      const healthBefore = await load(health);

      const data = generateSynthetic({
        interactions: size.interactions,
        nItems: size.products,
        nUsers: size.users,
        seed: 3,
        withMeta: true,
      });
      let tenantReason: string | null = null;
      let client: ApiClient | undefined;
      let apiKey = "";
      try {
        const tenant = await registerTenant(baseUrl, routes, "serving");
        client = tenant.client;
        apiKey = tenant.apiKey;
        await seedTenant(ctx, client, routes, data, notes);
        const rssBefore = server.rss();
        await trainTenant(ctx, client, routes, notes);
        const rssAfter = server.rss();
        if (Number.isFinite(rssBefore))
          notes.push(
            `server RSS ${formatNumber(rssBefore / 2 ** 20)} MiB before training, ${formatNumber(rssAfter / 2 ** 20)} MiB after`,
          );
      } catch (error) {
        if (!(error instanceof NotAvailable)) throw error;
        tenantReason = error.message;
      }

      const rows: Cell[][] = [];
      const results: { c: RouteCase; r: LoadResult }[] = [];
      for (const c of routeCases(data, size.maxRequests)) {
        const missing = tenantReason ?? routeMissing(routes, c.method, c.route);
        if (missing || !client) {
          rows.push([c.label, null, null, null, null, null, missing ?? "no tenant"]);
          continue;
        }
        const probe = await client.request(
          c.requests[0]!.method,
          c.requests[0]!.path,
          c.requests[0]!.body ? JSON.parse(c.requests[0]!.body) : undefined,
        );
        if (probe.status < 200 || probe.status >= 300) {
          rows.push([
            c.label,
            null,
            null,
            null,
            null,
            null,
            `failed: ${probe.status} ${JSON.stringify(probe.body).slice(0, 120)}`,
          ]);
          continue;
        }
        ctx.log(c.label);
        const r = await load(c.requests, { "x-api-key": apiKey }, c.warmup);
        results.push({ c, r });
      }

      ctx.log("GET /health (baseline, after)");
      const healthAfter = await load(health);
      const baseRps = (healthBefore.rps + healthAfter.rps) / 2;
      const figures: Figure[] = [
        { key: "serving.health.rps", value: baseRps, unit: "req/s", better: "higher" },
        { key: "serving.health.p50Ms", value: healthBefore.p50Ms, unit: "ms", better: "lower" },
        { key: "serving.health.p99Ms", value: healthBefore.p99Ms, unit: "ms", better: "lower" },
      ];
      const healthRow: Cell[] = [
        "GET /health (baseline)",
        baseRps,
        "1.00x",
        healthBefore.p50Ms,
        healthBefore.p99Ms,
        healthBefore.non2xx + healthAfter.non2xx,
        `before ${formatNumber(healthBefore.rps)}, after ${formatNumber(healthAfter.rps)} req/s`,
      ];
      const measuredRows: Cell[][] = results.map(({ c, r }) => {
        figures.push({ key: `serving.${c.key}.rps`, value: r.rps, unit: "req/s", better: "higher" });
        figures.push({
          key: `serving.${c.key}.rpsShareOfHealth`,
          value: r.rps / baseRps,
          unit: "ratio",
          better: "higher",
        });
        figures.push({ key: `serving.${c.key}.p50Ms`, value: r.p50Ms, unit: "ms", better: "lower" });
        figures.push({ key: `serving.${c.key}.p99Ms`, value: r.p99Ms, unit: "ms", better: "lower" });
        const latency = `p99 ${r.p99Ms < 10 ? "<" : "≥"} 10 ms`;
        const verdict =
          c.target === "throughput"
            ? `${r.rps / baseRps >= 0.5 ? "meets" : "below"} 50% of health; ${latency}`
            : c.target === "latency"
              ? `${r.p99Ms < 10 ? "meets" : "misses"} p99 < 10 ms`
              : "";
        const errors = r.errors + r.non2xx;
        return [
          c.label,
          r.rps,
          ratio(r.rps, baseRps),
          r.p50Ms,
          r.p99Ms,
          errors,
          [verdict, errors > 0 ? `${errors} errors` : ""].filter(Boolean).join("; "),
        ];
      });
      notes.push(
        `each route: ${size.warmup} s unrecorded warm-up, then ${size.seconds} s or ${formatNumber(size.maxRequests)} requests, whichever first; autocannon in the bench process, service in a child process, both on this machine`,
      );
      return {
        tables: [
          {
            title: `Serving (${CONNECTIONS} connections, loopback)`,
            columns: ["route", "req/s", "vs health", "p50 ms", "p99 ms", "errors", "note"],
            rows: [healthRow, ...measuredRows, ...rows],
          },
        ],
        figures,
        notes,
      };
    } finally {
      await server?.stop();
      await db?.drop();
    }
  },
};

async function seedTenant(
  ctx: BenchContext,
  client: ApiClient,
  routes: Set<string>,
  data: SyntheticDataset,
  notes: string[],
): Promise<void> {
  const missing = routeMissing(routes, "POST", "/api/v1/ingestion/batch");
  if (missing)
    throw new NotAvailable(`${missing.replace("not available yet: ", "")} (needed to seed the tenant)`);
  const { products, users } = catalogueRecords(data);
  const events = interactionRecords(data);
  const started = performance.now();
  const jobs: number[] = [];
  const post = async (body: unknown) => {
    const res = await client.expect("POST", "/api/v1/ingestion/batch", body, [202]);
    jobs.push(Number(res.jobId));
  };
  for (let i = 0; i < Math.max(products.length, users.length); i += BATCH) {
    await post({
      products: products.slice(i, i + BATCH),
      users: users.slice(i, i + BATCH),
      interactions: [],
    });
  }
  // Interactions reference products, so the catalogue must be in before they are sent.
  for (const job of jobs.splice(0)) await waitForIngestionJob(client, job, 600_000);
  for (let i = 0; i < events.length; i += BATCH)
    await post({ products: [], users: [], interactions: events.slice(i, i + BATCH) });
  let errors = 0;
  for (const job of jobs) {
    const done = await waitForIngestionJob(client, job, 1_800_000);
    errors += Array.isArray(done.errors) ? done.errors.length : 0;
  }
  const seconds = (performance.now() - started) / 1000;
  ctx.log(`seeded in ${seconds.toFixed(1)} s`);
  notes.push(
    `seeding through the batch route: ${seconds.toFixed(1)} s${errors ? `, ${errors} record errors` : ""}`,
  );
}

async function trainTenant(
  ctx: BenchContext,
  client: ApiClient,
  routes: Set<string>,
  notes: string[],
): Promise<void> {
  const missing = routeMissing(routes, "POST", "/api/v1/pipeline/train");
  if (missing) {
    notes.push(`no trained model: ${missing}; routes answer from their no-model fallback`);
    return;
  }
  const started = performance.now();
  const job = await trainAndWait(client, 1_800_000);
  const seconds = (performance.now() - started) / 1000;
  ctx.log(`trained in ${seconds.toFixed(1)} s`);
  notes.push(
    `training through the API: ${seconds.toFixed(1)} s (job ${job.jobId}, model ${job.modelId ?? "?"})`,
  );
}

function routeCases(data: SyntheticDataset, maxRequests: number): RouteCase[] {
  const { nUsers, nItems } = data.events;
  const users = Array.from({ length: Math.min(SAMPLE, nUsers) }, (_, i) =>
    userId(Math.floor((i * nUsers) / Math.min(SAMPLE, nUsers))),
  );
  const items = Array.from({ length: Math.min(SAMPLE, nItems) }, (_, i) =>
    productId(Math.floor((i * nItems) / Math.min(SAMPLE, nItems))),
  );
  const categories = [
    ...new Set((data.items ?? []).map((m) => m.categoryPath!.split("/").slice(0, 2).join("/"))),
  ];
  const post = (path: string, body: (u: string, i: number) => unknown) =>
    users.map((u, i) => ({
      method: "POST" as const,
      path: path.replace("{p}", items[i % items.length]!).replace("{q}", items[(i + 7) % items.length]!),
      body: JSON.stringify(body(u, i)),
    }));
  const R = "/api/v1/recommendations";
  return [
    {
      key: "personalized",
      label: "POST personalized/query (hybrid)",
      method: "POST",
      route: `${R}/personalized/query`,
      target: "throughput",
      requests: post(`${R}/personalized/query`, (u) => ({ external_user_id: u, limit: 20 })),
    },
    {
      key: "personalizedUncached",
      label: "POST personalized/query, every answer ranked afresh",
      method: "POST",
      route: `${R}/personalized/query`,
      ...distinctAnswers(users, `${R}/personalized/query`, maxRequests),
    },
    {
      key: "personalizedFiltered1pct",
      label: "POST personalized/query, filter = 1% of items",
      method: "POST",
      route: `${R}/personalized/query`,
      target: "latency",
      requests: post(`${R}/personalized/query`, (u) => ({
        external_user_id: u,
        limit: 20,
        filters: { logic: "and", filters: [{ field: "price", op: "lt", value: 2 }] },
      })),
    },
    {
      key: "category",
      label: "GET category/{category}",
      method: "GET",
      route: `${R}/category/{category}`,
      requests: categories.map((c) => ({
        method: "GET" as const,
        path: `${R}/category/${encodeURIComponent(c)}?limit=20`,
      })),
    },
    {
      key: "similar",
      label: "GET products/external/{id}/similar",
      method: "GET",
      route: `${R}/products/external/{external_product_id}/similar`,
      requests: items.map((p) => ({
        method: "GET" as const,
        path: `${R}/products/external/${p}/similar?limit=20`,
      })),
    },
    {
      key: "homepage",
      label: "POST ecommerce/homepage",
      method: "POST",
      route: `${R}/ecommerce/homepage`,
      requests: post(`${R}/ecommerce/homepage`, (u) => ({ external_user_id: u, limit: 12 })),
    },
    {
      key: "productPage",
      label: "POST ecommerce/product-page",
      method: "POST",
      route: `${R}/ecommerce/product-page`,
      requests: post(`${R}/ecommerce/product-page?current_product_id={p}`, (u) => ({
        external_user_id: u,
        limit: 8,
      })),
    },
    {
      key: "cart",
      label: "POST ecommerce/cart",
      method: "POST",
      route: `${R}/ecommerce/cart`,
      requests: post(`${R}/ecommerce/cart?cart_items={p}&cart_items={q}`, (u) => ({
        external_user_id: u,
        limit: 6,
      })),
    },
    {
      key: "checkout",
      label: "POST ecommerce/checkout",
      method: "POST",
      route: `${R}/ecommerce/checkout`,
      requests: post(`${R}/ecommerce/checkout?order_value=120`, (u) => ({ external_user_id: u, limit: 4 })),
    },
  ];
}

/**
 * Personalised queries that the page cache cannot answer: each request carries its own `context.location`
 * (accepted, no effect on the ranking), so every answer is ranked, at the cost of a repeated user's
 * ordinary ranking (their cached history and fold-in). Warm-up requests use other locations.
 */
export function distinctAnswers(
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
