/**
 * `bun run bench/profile-serving.ts seed <dir>` seeds and trains the serving bench's tenant on an embedded
 * store in <dir>; `... run <dir> shopMix|views|homepage|category|cold|repeated|productPage|cart|checkout [seconds]` starts the service on it under
 * Bun's CPU profiler (PROFILE=0: without it), sends /health, an unrecorded warm-up and then the workload with
 * wrk (32 connections), prints the figures (with the server's CPU per request, whole, in the kernel and by kind
 * of thread, and its minor page faults per request with what one costs on this machine; its resident memory
 * before the request that loads the tenant's model, as it returns, once settled and at its peak meanwhile, and
 * at the end), and leaves the profile (.cpuprofile and markdown) in <dir>/prof. On the embedded store it then
 * prints what the store's thread ran during the measured seconds (`storeThread`: the share of them it was
 * busy, and the statements that took most of it; see src/db/store-timings.ts).
 * Run it on a copy of the seeded directory to compare two versions on the same data. For `cold`, FIRST_USERS=N
 * sends N users' first requests before the measured ones (the account's history bulk read and the JIT done).
 * THINK_MS=N makes each connection pause N ms on average between its measured requests (a steady offered
 * rate instead of as fast as the service answers). SPLIT=1 first runs the shop mix's queries and views as two
 * loads at once and prints each kind's latency. EXPERIMENT_ROUNDS=N then alternates plain runs of the workload
 * with runs under `bench serving`'s A/B experiment (N of those, N + 1 plain) and prints each experiment run's
 * cost against the mean of the plain runs either side of it, as that bench's row computes it.
 */
import { existsSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createRng } from "../src/engine/rng";
import { generateSynthetic } from "./data/synthetic";
import { ApiClient, ingestSynthetic, publishedRoutes, registerTenant, trainAndWait } from "./lib/api";
import { type LoadRequest, type LoadResult, runLoad } from "./lib/load";
import { pageFaultMicros } from "./lib/machine";
import { productId, userId } from "./lib/records";
import { benchServerEnv, freePort, processPeakRss, processRss, resetPeakRss, settledRss } from "./lib/server";
import { experimentRow } from "./parts/serving-setup";

const [mode, dir = "/tmp/prof/tenant", workload = "shopMix", secondsArg = "8"] = process.argv.slice(2);
const repoRoot = join(import.meta.dir, "..");
const R = "/api/v1/recommendations";
const products = Number(process.env.PRODUCTS ?? 20_000);
const users = Number(process.env.USERS ?? 5_000);
const interactions = Number(process.env.INTERACTIONS ?? 150_000);
const storeTimingsFile = join(dir, "store-timings.jsonl");

async function start(profile: boolean) {
  mkdirSync(dir, { recursive: true });
  const port = await freePort();
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env))
    if (v !== undefined && !k.startsWith("DATABASE_")) env[k] = v;
  // The store's thread's time per kind of statement (the CPU profile sees only the request thread).
  if (!process.env.PG_URL) {
    rmSync(storeTimingsFile, { force: true });
    env.EMBEDDED_STORE_TIMINGS = storeTimingsFile;
  }
  Object.assign(
    env,
    benchServerEnv(
      dir,
      { repoRoot, ...(process.env.PG_URL ? { databaseUrl: process.env.PG_URL } : {}) },
      port,
    ),
  );
  const args =
    profile && process.env.PROFILE !== "0"
      ? [
          "--cpu-prof",
          "--cpu-prof-md",
          `--cpu-prof-dir=${join(dir, "prof")}`,
          `--cpu-prof-name=${workload}-${Date.now()}.cpuprofile`,
        ]
      : [];
  const out = openSync(join(dir, "server.log"), "a");
  const child = Bun.spawn([process.execPath, ...args, "run", join(repoRoot, "src", "main.ts")], {
    cwd: repoRoot,
    env,
    stdout: out,
    stderr: out,
  });
  const baseUrl = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 600; i++) {
    try {
      if ((await fetch(`${baseUrl}/health`)).ok) break;
    } catch {}
    await Bun.sleep(100);
  }
  return { baseUrl, child };
}

/**
 * User plus system CPU time of a process, of its main thread and of each of its threads, in clock ticks (1/100 s
 * on Linux); the process's system time alone, and its minor page faults (pages the kernel mapped in on first
 * touch, such as memory the allocator had handed back to it).
 */
function cpuTicks(pid: number): {
  process: number;
  system: number;
  minorFaults: number;
  main: number;
  threads: Map<number, Thread>;
} {
  const threads = threadTicks(pid);
  const stat = readStat(`/proc/${pid}/stat`);
  return { ...stat, process: stat.ticks, main: threads.get(pid)?.ticks ?? 0, threads };
}

/**
 * A `/proc/<pid>/stat` line's user plus system time and system time alone, in clock ticks, and its minor
 * faults; zeros once the task is gone.
 */
function readStat(path: string): { ticks: number; system: number; minorFaults: number } {
  try {
    // Fields after the command name (which may hold spaces): minflt is the 8th, utime and stime the 12th and 13th.
    const fields = readFileSync(path, "utf8").split(") ")[1]!.split(" ");
    return {
      ticks: Number(fields[11]) + Number(fields[12]),
      system: Number(fields[12]),
      minorFaults: Number(fields[7]),
    };
  } catch {
    return { ticks: 0, system: 0, minorFaults: 0 };
  }
}

interface Thread {
  name: string;
  ticks: number;
}

/** Every thread of the process by id: the kernel's name for it (15 characters at most) and its CPU ticks. */
function threadTicks(pid: number): Map<number, Thread> {
  const threads = new Map<number, Thread>();
  let tids: string[] = [];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return threads;
  }
  for (const tid of tids) {
    try {
      const name = readFileSync(`/proc/${pid}/task/${tid}/comm`, "utf8").trim();
      threads.set(Number(tid), { name, ticks: readStat(`/proc/${pid}/task/${tid}/stat`).ticks });
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return threads;
}

/**
 * CPU µs per request served by each kind of thread, by the kernel's thread names, the request thread as
 * "request thread": the embedded store's thread is a "Worker", and JavaScriptCore names its compiler and
 * collector threads by the tail of their names ("t Helper Thread" is busy while PGlite's WebAssembly is
 * compiled, in the first minutes of load). A thread that ended during the run is left out; kinds under 1 µs
 * too.
 */
function perThreadUs(
  pid: number,
  before: Map<number, Thread>,
  after: Map<number, Thread>,
  served: number,
): Record<string, number> {
  const byName = new Map<string, number>();
  for (const [tid, thread] of after) {
    const name = tid === pid ? "request thread" : thread.name;
    const ticks = thread.ticks - (before.get(tid)?.ticks ?? 0);
    byName.set(name, (byName.get(name) ?? 0) + ticks);
  }
  const out: Record<string, number> = {};
  for (const [name, ticks] of [...byName].sort((a, b) => b[1] - a[1])) {
    const us = Math.round((ticks * 10_000) / Math.max(1, served));
    if (us >= 1) out[name] = us;
  }
  return out;
}

/** The server's resident memory in MiB, as the kernel reports it (VmRSS). */
function residentMiB(pid: number): number {
  return Math.round(processRss(pid) / 2 ** 20);
}

const data = () =>
  generateSynthetic({
    interactions,
    nItems: products,
    nUsers: users,
    nCategories: 100,
    seed: 3,
    withMeta: true,
  });

if (mode === "seed") {
  const s = await start(false);
  const routes = await publishedRoutes(s.baseUrl);
  const tenant = await registerTenant(s.baseUrl, routes, "profile");
  const d = data();
  const { seconds } = await ingestSynthetic(tenant.client, d);
  console.log(`seeded in ${seconds} s`);
  const t0 = performance.now();
  await trainAndWait(tenant.client, 1_800_000);
  console.log(`trained in ${(performance.now() - t0) / 1000} s`);
  writeFileSync(join(dir, "tenant.json"), JSON.stringify({ apiKey: tenant.apiKey }));
  s.child.kill("SIGTERM");
  await s.child.exited;
} else {
  const { apiKey } = JSON.parse(readFileSync(join(dir, "tenant.json"), "utf8"));
  const d = data();
  const cats = [...new Set((d.items ?? []).map((m) => m.categoryPath as string))];
  const rng = createRng(Number(process.env.SEED ?? 1));
  const user = () => userId(Math.floor(rng() * users));
  const pers = (u: string, extra = {}): LoadRequest => ({
    method: "POST",
    path: `${R}/personalized/query`,
    body: JSON.stringify({ external_user_id: u, limit: 20, ...extra }),
  });
  const view = (): LoadRequest => ({
    method: "POST",
    path: "/api/v1/interactions/",
    body: JSON.stringify({
      external_user_id: user(),
      external_product_id: productId(Math.floor(rng() * products)),
      interaction_type: "VIEW",
    }),
  });
  const make = (): LoadRequest => {
    if (workload === "shopMix") return rng() < 0.1 ? view() : pers(user());
    if (workload === "views") return view();
    if (workload === "homepage")
      return {
        method: "POST",
        path: `${R}/ecommerce/homepage`,
        body: JSON.stringify({ external_user_id: user(), limit: 12 }),
      };
    if (workload === "category")
      return pers(user(), {
        filters: {
          logic: "and",
          filters: [{ field: "category", op: "eq", value: cats[Math.floor(rng() * cats.length)] }],
        },
      });
    if (workload === "repeated") return pers(userId(0));
    if (workload === "productPage" || workload === "cart") {
      const product = () => productId(Math.floor(rng() * products));
      return {
        method: "POST",
        path:
          workload === "cart"
            ? `${R}/ecommerce/cart?cart_items=${product()}&cart_items=${product()}`
            : `${R}/ecommerce/product-page?current_product_id=${product()}`,
        body: JSON.stringify({ external_user_id: user(), limit: workload === "cart" ? 6 : 8 }),
      };
    }
    if (workload === "checkout")
      return {
        method: "POST",
        path: `${R}/ecommerce/checkout?order_value=120`,
        body: JSON.stringify({ external_user_id: user(), limit: 4 }),
      };
    if (workload === "health") return { method: "GET", path: "/health" };
    return pers(user());
  };
  const spawned = Date.now();
  const s = await start(true);
  const headers = { "x-api-key": apiKey };
  const h = await runLoad({
    baseUrl: s.baseUrl,
    requests: [{ method: "GET", path: "/health" }],
    connections: 32,
    durationSeconds: 3,
    maxRequests: 1e9,
  });
  const once = workload === "cold";
  const requests = once
    ? Array.from({ length: users - 1 }, (_, i) => pers(userId(i + 1))).sort(() => rng() - 0.5)
    : Array.from({ length: 50_000 }, make);
  // The process's resident memory before and after the request that loads the tenant's model, read as
  // `bench serving` reads it before row (e): as that request returns, once settled, and at its peak.
  const rssEmptyMiB = residentMiB(s.child.pid);
  const peakFromLoad = resetPeakRss(s.child.pid);
  const load = pers(userId(0));
  const loaded = await fetch(`${s.baseUrl}${load.path}`, {
    method: load.method,
    headers: { ...headers, "content-type": "application/json" },
    body: load.body ?? null,
  });
  await loaded.text();
  if (!loaded.ok) throw new Error(`the model-loading query answered ${loaded.status}`);
  const rssLoadedMiB = residentMiB(s.child.pid);
  const rssSettledMiB = Math.round((await settledRss(() => processRss(s.child.pid))).bytes / 2 ** 20);
  const rssPeakMiB = peakFromLoad ? Math.round(processPeakRss(s.child.pid) / 2 ** 20) : Number.NaN;
  // First requests are measured once the model has loaded, as `bench serving` row (e) does.
  if (once) {
    await Bun.sleep(5_000);
    const before = requests.splice(0, Number(process.env.FIRST_USERS ?? 0));
    if (before.length > 0) {
      const r = await runLoad({
        baseUrl: s.baseUrl,
        headers,
        requests: before,
        connections: 32,
        durationSeconds: 60,
        maxRequests: 1e9,
        once,
      });
      console.log(
        JSON.stringify({ firstUsers: before.length, rps: Math.round(r.rps), p50: r.p50Ms, p99: r.p99Ms }),
      );
    }
  } else {
    await runLoad({
      baseUrl: s.baseUrl,
      headers,
      requests: Array.from({ length: 50_000 }, make),
      connections: 32,
      durationSeconds: Number(process.env.WARMUP ?? 6),
      maxRequests: 1e9,
    });
  }
  // SPLIT=1: the shop mix's queries and views as two loads side by side (29 and 3 connections), so that each
  // kind's latency shows; wrk reports one distribution per load.
  if (process.env.SPLIT === "1") {
    const side = (make: () => LoadRequest, connections: number) =>
      runLoad({
        baseUrl: s.baseUrl,
        headers,
        requests: Array.from({ length: 50_000 }, make),
        connections,
        durationSeconds: Number(secondsArg),
        maxRequests: 1e9,
      });
    const [queries, views] = await Promise.all([side(() => pers(user()), 29), side(view, 3)]);
    const figures = (r: typeof queries) => ({ rps: Math.round(r.rps), p50: r.p50Ms, p99: r.p99Ms });
    console.log(JSON.stringify({ split: { queries: figures(queries), views: figures(views) } }));
  }
  const rounds = Number(process.env.EXPERIMENT_ROUNDS ?? 0);
  if (rounds > 0) {
    const client = new ApiClient(s.baseUrl, apiKey);
    const routes = await publishedRoutes(s.baseUrl);
    // Each run's throughput and the server's CPU time per request served (µs): the experiment's cost read
    // both ways (on a shared host the two move together, so neither is the steadier).
    const load = async (): Promise<LoadResult & { cpuUs: number }> => {
      const cpu0 = cpuTicks(s.child.pid).process;
      const r = await runLoad({
        baseUrl: s.baseUrl,
        headers,
        requests: Array.from({ length: 50_000 }, make),
        connections: 32,
        durationSeconds: Number(secondsArg),
        maxRequests: 1e9,
      });
      return { ...r, cpuUs: ((cpuTicks(s.child.pid).process - cpu0) * 10_000) / Math.max(1, r.requests) };
    };
    let before = await load();
    const costs: number[] = [];
    const cpuCosts: number[] = [];
    for (let i = 0; i < rounds; i++) {
      const during = await experimentRow(client, routes, load);
      if (during === null) throw new Error("the service has no experiments route");
      const after = await load();
      costs.push((before.rps + after.rps) / 2 / during.rps - 1);
      cpuCosts.push(during.cpuUs / ((before.cpuUs + after.cpuUs) / 2) - 1);
      console.log(
        JSON.stringify({
          rps: [before.rps, during.rps, after.rps].map(Math.round),
          cpuUs: [before.cpuUs, during.cpuUs, after.cpuUs].map(Math.round),
          costPct: +(costs.at(-1)! * 100).toFixed(1),
          cpuCostPct: +(cpuCosts.at(-1)! * 100).toFixed(1),
        }),
      );
      before = after;
    }
    const mean = (xs: number[]) => +((xs.reduce((a, b) => a + b, 0) / xs.length) * 100).toFixed(2);
    console.log(JSON.stringify({ rounds, costMeanPct: mean(costs), cpuCostMeanPct: mean(cpuCosts) }));
  }
  const measuredAt = Date.now();
  const measuredFrom = (measuredAt - spawned) / 1000;
  const cpuBefore = cpuTicks(s.child.pid);
  const r = await runLoad({
    baseUrl: s.baseUrl,
    headers,
    requests,
    connections: 32,
    durationSeconds: Number(secondsArg),
    maxRequests: 1e9,
    once,
    ...(process.env.THINK_MS === undefined ? {} : { thinkMs: Number(process.env.THINK_MS) }),
  });
  const measuredUntil = Date.now();
  const measuredTo = (measuredUntil - spawned) / 1000;
  const cpuAfter = cpuTicks(s.child.pid);
  // This machine's cost of one such fault (µs), read by this process once the load has ended.
  const pageFaultUs = pageFaultMicros();
  const rssMiB = residentMiB(s.child.pid);
  const served = r.requests;
  // CPU time the server spent per request served, in µs: the whole process and its request thread.
  const cpuUs = (ticks: number) => Math.round((ticks * 10_000) / Math.max(1, served));
  console.log(
    JSON.stringify({
      measuredFrom,
      measuredTo,
      workload,
      rps: Math.round(r.rps),
      p50: r.p50Ms,
      p99: r.p99Ms,
      errors: r.errors + r.non2xx,
      health: Math.round(h.rps),
      share: (r.rps / h.rps).toFixed(3),
      cpuUsPerRequest: cpuUs(cpuAfter.process - cpuBefore.process),
      mainThreadUsPerRequest: cpuUs(cpuAfter.main - cpuBefore.main),
      systemUsPerRequest: cpuUs(cpuAfter.system - cpuBefore.system),
      minorFaultsPerRequest: +((cpuAfter.minorFaults - cpuBefore.minorFaults) / Math.max(1, served)).toFixed(
        2,
      ),
      pageFaultUs: pageFaultUs === null ? null : +pageFaultUs.toFixed(1),
      threadsUsPerRequest: perThreadUs(s.child.pid, cpuBefore.threads, cpuAfter.threads, served),
      rssEmptyMiB,
      rssLoadedMiB,
      rssSettledMiB,
      rssPeakMiB,
      rssMiB,
    }),
  );
  s.child.kill("SIGTERM");
  await s.child.exited;
  const store = storeStatements(measuredAt, measuredUntil, served);
  if (store !== null) console.log(JSON.stringify({ storeThread: store }));
  if (process.env.PROFILE !== "0" && !existsSync(join(dir, "prof"))) console.log("no profile written");
}

/**
 * What the embedded store's thread ran while the load was measured (its lines written within the window, a
 * quarter of a second each): the share of the window it was busy, and the kinds of statement that took most
 * of it, with their count, total milliseconds and microseconds per request served.
 */
function storeStatements(from: number, to: number, served: number) {
  if (!existsSync(storeTimingsFile)) return null;
  const kinds = new Map<string, { count: number; ms: number }>();
  let busyMs = 0;
  for (const line of readFileSync(storeTimingsFile, "utf8").split("\n")) {
    if (line === "") continue;
    const { at, statements } = JSON.parse(line) as {
      at: number;
      statements: Record<string, [number, number]>;
    };
    if (at <= from || at > to) continue;
    for (const [label, [count, ms]] of Object.entries(statements)) {
      const kind = kinds.get(label) ?? { count: 0, ms: 0 };
      kind.count += count;
      kind.ms += ms;
      kinds.set(label, kind);
      busyMs += ms;
    }
  }
  const top = [...kinds].sort((a, b) => b[1].ms - a[1].ms).slice(0, 8);
  return {
    busyShare: +(busyMs / (to - from)).toFixed(3),
    statements: top.map(([label, { count, ms }]) => ({
      label,
      count,
      ms: Math.round(ms),
      usPerRequest: +((ms * 1000) / Math.max(1, served)).toFixed(1),
    })),
  };
}
