/**
 * Does training stall serving? The real service (a child process) gets a synthetic tenant with a large
 * catalogue through the batch route; then `/health` is asked every 50 ms, open loop (a request leaves on
 * time whether or not the previous one has answered, so a frozen event loop shows as every request it held
 * up), from the moment the training job is queued until the published model's snapshot is being served, plus
 * a short tail. Worst and p99 latency of those requests are the figures; the goal is a worst under 100 ms.
 *
 * Runnable alone: `bun bench/parts/training-stall.ts [--postgres] [--products N] [--interactions N]
 * [--keep-log FILE] [--cpu-prof DIR] [--dataset movielens-latest-small|rees46|movielens-100k]`.
 */
import { loadRealDataset, REAL_DATASETS, type RealDatasetName } from "../data/loaders";
import { generateSynthetic } from "../data/synthetic";
import {
  type ApiClient,
  ingestSynthetic,
  publishedRoutes,
  registerTenant,
  waitForIngestionJob,
} from "../lib/api";
import { createFreshDatabase, type FreshDatabase, postgresUnavailableReason } from "../lib/postgres";
import { userId } from "../lib/records";
import { type RunningServer, startChildServer } from "../lib/server";
import { NotAvailable } from "../lib/types";
import { interactionBodies, productBodies } from "../quality-served";

export interface StallOptions {
  repoRoot: string;
  store: "pglite" | "postgres";
  postgresAdminUrl: string;
  products: number;
  interactions: number;
  log(message: string): void;
  /** Copy the service's log here (and its slow /health requests beside it) before it stops. */
  keepLogAs?: string;
  /**
   * Profile the service's main thread (Bun's sampling profiler, written here when it stops); samples carry
   * wall-clock times, so the slow requests kept beside the log show what ran while they waited.
   */
  cpuProfileDir?: string;
  /**
   * Seed one of the shared real data sets (all its interactions) instead of the synthetic catalogue, and
   * train it as a shop would (no options: the engine's search runs).
   */
  dataset?: { dir: string; name: RealDatasetName };
}

export interface StallResult {
  store: "pglite" | "postgres";
  products: number;
  interactions: number;
  /** /health requests sent while the job ran and the snapshot was swapped in. */
  requests: number;
  failed: number;
  worstMs: number;
  p99Ms: number;
  p50Ms: number;
  trainSeconds: number;
  /** From the job's completion until the account's snapshot was served from memory. */
  swapSeconds: number;
  seedSeconds: number;
  /**
   * The service's own view over the same span (recsys_event_loop_delay_seconds): how many of its 20 ms
   * timer ticks fired more than 100 ms late, and the upper bound of the worst bucket reached. A client on a
   * busy host also waits for its own CPU; these count only time the service's request thread was held.
   */
  serviceDelay: { over100ms: number; worstBucketSeconds: number };
}

const POLL_MS = 50;
/** /health keeps being asked this long after the snapshot is in, to catch work that follows the swap. */
const TAIL_MS = 3000;

export async function measureTrainingStall(options: StallOptions): Promise<StallResult> {
  let db: FreshDatabase | undefined;
  let server: RunningServer | undefined;
  try {
    if (options.store === "postgres") {
      const unavailable = await postgresUnavailableReason(options.postgresAdminUrl);
      if (unavailable) throw new NotAvailable(unavailable);
      db = await createFreshDatabase(options.postgresAdminUrl, "training");
    }
    server = await startChildServer({
      repoRoot: options.repoRoot,
      ...(db ? { databaseUrl: db.url } : {}),
      // The tenant has one model: a snapshot cache too small for it would measure evictions, not training.
      env: {
        SNAPSHOT_CACHE_MB: "4096",
        LOG_LEVEL: "info",
        ...(options.cpuProfileDir === undefined
          ? {}
          : { BUN_OPTIONS: `--cpu-prof --cpu-prof-dir=${options.cpuProfileDir}` }),
      },
    });
    const tenant = await registerTenant(server.baseUrl, await publishedRoutes(server.baseUrl), "stall");
    const seedStarted = performance.now();
    const seeded = await seed(tenant.client, options);
    const seedSeconds = (performance.now() - seedStarted) / 1000;
    options.log(
      `seeded ${options.dataset?.name ?? `${options.products} products`} in ${seedSeconds.toFixed(1)} s`,
    );

    options.log("training");
    const delayBefore = await loopDelayBuckets(server.baseUrl);
    const poller = pollHealth(server.baseUrl);
    const trainStarted = performance.now();
    const job = await tenant.client.expect(
      "POST",
      "/api/v1/pipeline/train",
      // A fixed configuration (the search would fit a dozen candidates): what is measured is the service
      // around the fit, and the artifact's size is set by the catalogue either way. A real data set is
      // trained with the defaults, as a shop would.
      options.dataset === undefined ? { algorithm: "als", regularization: 0.05, iterations: 8 } : {},
      [202],
    );
    await waitForJob(tenant.client, Number(job.jobId));
    const trainSeconds = (performance.now() - trainStarted) / 1000;
    options.log(`trained and stored in ${trainSeconds.toFixed(1)} s`);
    const swapStarted = performance.now();
    // The first request after publication loads the snapshot (the account was never served before).
    const first = tenant.client.request("POST", "/api/v1/recommendations/personalized/query", {
      external_user_id: userId(0),
      limit: 5,
    });
    await waitForSnapshot(server.baseUrl, tenant.accountId);
    const answered = await first;
    if (answered.status !== 200) throw new Error(`personalized query answered ${answered.status}`);
    const swapSeconds = (performance.now() - swapStarted) / 1000;
    options.log(`snapshot served ${swapSeconds.toFixed(1)} s after the job completed`);
    await Bun.sleep(TAIL_MS);
    const samples = await poller.stop();
    const serviceDelay = delayBetween(delayBefore, await loopDelayBuckets(server.baseUrl));
    if (options.keepLogAs !== undefined) {
      await Bun.write(options.keepLogAs, Bun.file(`${server.dataDir}/server.log`));
      const slow = samples.filter((x) => x.ms > 100).sort((a, b) => a.at - b.at);
      await Bun.write(
        `${options.keepLogAs}.slow`,
        slow.map((x) => `${new Date(x.at).toISOString()} ${x.ms.toFixed(0)} ms`).join("\n"),
      );
    }
    const latencies = samples.filter((s) => s.ok).map((s) => s.ms);
    latencies.sort((a, b) => a - b);
    const at = (q: number) =>
      latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? NaN;
    return {
      store: options.store,
      products: seeded.products,
      interactions: seeded.interactions,
      requests: samples.length,
      failed: samples.filter((s) => !s.ok).length,
      worstMs: latencies[latencies.length - 1] ?? NaN,
      p99Ms: at(0.99),
      p50Ms: at(0.5),
      trainSeconds,
      swapSeconds,
      seedSeconds,
      serviceDelay,
    };
  } catch (error) {
    if (server !== undefined) {
      const tail = await Bun.file(`${server.dataDir}/server.log`)
        .text()
        .catch(() => "");
      options.log(`the service's log ends:\n${tail.slice(-3000)}`);
    }
    throw error;
  } finally {
    await server?.stop();
    await db?.drop();
  }
}

/** Seeds the tenant; returns how many products and interactions were sent. */
async function seed(
  client: ApiClient,
  options: StallOptions,
): Promise<{ products: number; interactions: number }> {
  if (options.dataset !== undefined) {
    const ds = loadRealDataset(options.dataset.dir, options.dataset.name);
    options.log(
      `${options.dataset.name}: ${ds.itemIds.length} products, ${ds.events.user.length} interactions`,
    );
    await sendAll(client, "products", productBodies(ds));
    await sendAll(client, "interactions", interactionBodies(ds));
    return { products: ds.itemIds.length, interactions: ds.events.user.length };
  }
  const nUsers = Math.max(100, Math.round(options.interactions / 40));
  const data = generateSynthetic({
    interactions: options.interactions,
    nItems: options.products,
    nUsers,
    seed: 5,
    withMeta: true,
  });
  await ingestSynthetic(client, data, options.log);
  return { products: options.products, interactions: options.interactions };
}

/** Records through the batch route, a batch at a time, each applied before the next is sent. */
async function sendAll(
  client: ApiClient,
  kind: "products" | "interactions",
  records: unknown[],
): Promise<void> {
  const batch = 1_000;
  for (let i = 0; i < records.length; i += batch) {
    const body = { products: [], users: [], interactions: [], [kind]: records.slice(i, i + batch) };
    const accepted = await client.expect("POST", "/api/v1/ingestion/batch", body, [202]);
    const done = await waitForIngestionJob(client, Number(accepted.jobId), 600_000);
    if (done.status === "failed") throw new Error(`ingestion job failed: ${done.failureReason}`);
  }
}

interface Sample {
  ms: number;
  ok: boolean;
  /** When the request was sent (epoch ms), to line slow answers up with the service's log. */
  at: number;
}

/** Cumulative counts of the service's event-loop delay histogram, by upper bound (seconds; +Inf last). */
async function loopDelayBuckets(baseUrl: string): Promise<Map<number, number>> {
  const text = await (await fetch(`${baseUrl}/metrics`)).text();
  const buckets = new Map<number, number>();
  for (const match of text.matchAll(/^recsys_event_loop_delay_seconds_bucket\{le="([^"]+)"\} (\S+)$/gm)) {
    buckets.set(match[1] === "+Inf" ? Number.POSITIVE_INFINITY : Number(match[1]), Number(match[2]));
  }
  return buckets;
}

function delayBetween(before: Map<number, number>, after: Map<number, number>): StallResult["serviceDelay"] {
  const inSpan = (le: number) => (after.get(le) ?? 0) - (before.get(le) ?? 0);
  const total = inSpan(Number.POSITIVE_INFINITY);
  const bounds = [...after.keys()].sort((a, b) => a - b);
  // The smallest bound whose bucket holds every tick of the span.
  const worstBucketSeconds = bounds.find((le) => inSpan(le) === total) ?? Number.POSITIVE_INFINITY;
  return { over100ms: total - inSpan(0.1), worstBucketSeconds };
}

/** Sends GET /health every POLL_MS without waiting for answers; stop() waits for the last ones. */
function pollHealth(baseUrl: string): { stop(): Promise<Sample[]> } {
  const samples: Sample[] = [];
  const pending = new Set<Promise<void>>();
  const ask = () => {
    const sent = performance.now();
    const at = Date.now();
    const request = fetch(`${baseUrl}/health`, { signal: AbortSignal.timeout(60_000) })
      .then(async (res) => {
        await res.arrayBuffer();
        samples.push({ ms: performance.now() - sent, ok: res.ok, at });
      })
      .catch(() => {
        samples.push({ ms: performance.now() - sent, ok: false, at });
      })
      .finally(() => pending.delete(request));
    pending.add(request);
  };
  // Each tick is scheduled from the start time, so a late timer (this process is busy too) does not
  // thin out the requests.
  const started = performance.now();
  let sent = 0;
  const timer = setInterval(() => {
    const due = Math.floor((performance.now() - started) / POLL_MS);
    while (sent < due) {
      sent++;
      ask();
    }
  }, POLL_MS / 5);
  return {
    async stop() {
      clearInterval(timer);
      await Promise.all([...pending]);
      return samples;
    },
  };
}

async function waitForJob(client: ApiClient, jobId: number): Promise<void> {
  const deadline = Date.now() + 1_800_000;
  for (;;) {
    // A frozen service is what is measured: a status request it holds up is asked again.
    const res = await client
      .request("GET", `/api/v1/pipeline/jobs/${jobId}/status`)
      .catch(() => ({ status: 0, body: undefined as any }));
    if (res.status === 200 && res.body.status === "completed") return;
    if (res.status === 200 && res.body.status === "failed") {
      throw new Error(`training job ${jobId} failed: ${res.body.error}`);
    }
    if (Date.now() > deadline) throw new Error(`training job ${jobId} did not finish`);
    await Bun.sleep(200);
  }
}

/** Waits until the service reports the account's snapshot in memory (its gauge on /metrics). */
async function waitForSnapshot(baseUrl: string, accountId: number): Promise<void> {
  const series = `recsys_snapshot_memory_bytes_by_account{account_id="${accountId}"}`;
  const deadline = Date.now() + 600_000;
  while (Date.now() < deadline) {
    const text = await (await fetch(`${baseUrl}/metrics`)).text();
    if (text.split("\n").some((line) => line.startsWith(series))) return;
    await Bun.sleep(100);
  }
  throw new Error(`the snapshot of account ${accountId} was not loaded within 10 minutes`);
}

function datasetName(name: string): RealDatasetName {
  if (!(REAL_DATASETS as readonly string[]).includes(name)) {
    throw new Error(`unknown data set ${name}; known: ${REAL_DATASETS.join(", ")}`);
  }
  return name as RealDatasetName;
}

if (import.meta.main) {
  const arg = (name: string, fallback: string) => {
    const i = process.argv.indexOf(`--${name}`);
    return i >= 0 && process.argv[i + 1] !== undefined ? process.argv[i + 1]! : fallback;
  };
  const result = await measureTrainingStall({
    repoRoot: arg("repo", `${import.meta.dir}/../..`),
    store: process.argv.includes("--postgres") ? "postgres" : "pglite",
    postgresAdminUrl: process.env["BENCH_POSTGRES_URL"] || "postgres://postgres@127.0.0.1:5432/postgres",
    products: Number(arg("products", "100000")),
    interactions: Number(arg("interactions", "100000")),
    ...(process.argv.includes("--keep-log") ? { keepLogAs: arg("keep-log", "/tmp/training-stall.log") } : {}),
    ...(process.argv.includes("--cpu-prof")
      ? { cpuProfileDir: arg("cpu-prof", "/tmp/training-stall-prof") }
      : {}),
    ...(process.argv.includes("--dataset")
      ? {
          dataset: {
            dir: arg("datasets", `${import.meta.dir}/../../../shared/datasets`),
            name: datasetName(arg("dataset", "movielens-latest-small")),
          },
        }
      : {}),
    log: (m) => process.stderr.write(`  [training-stall ${new Date().toISOString().slice(11, 19)}] ${m}\n`),
  });
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  process.exit(0);
}
