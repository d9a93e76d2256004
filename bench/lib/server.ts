import { mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** Limits high enough that the bench measures the service, not the plan's rate limits. */
const UNLIMITED = 1_000_000_000;
const PLAN_NAMES = ["FREE", "STARTER", "PRO", "ENTERPRISE"];

export function writeBenchPlansFile(dir: string): string {
  const plans = Object.fromEntries(
    PLAN_NAMES.map((name) => [
      name,
      {
        name,
        priceMonthly: 0,
        currency: "USD",
        limits: {
          requestsPerMinute: UNLIMITED,
          monthlyRequests: UNLIMITED,
          maxProducts: UNLIMITED,
          maxEndUsers: UNLIMITED,
          trainingsPerDay: UNLIMITED,
          bulkPerMinute: UNLIMITED,
          bulkPerHour: UNLIMITED,
          bulkPerDay: UNLIMITED,
        },
        features: [],
      },
    ]),
  );
  const file = join(dir, "bench-plans.json");
  writeFileSync(file, JSON.stringify(plans, null, 2));
  return file;
}

export async function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const address = srv.address();
      const port = typeof address === "object" && address ? address.port : 0;
      srv.close(() => resolvePort(port));
    });
  });
}

export interface ServerOptions {
  repoRoot: string;
  /** Absent: PGlite under a temporary DATA_DIR. */
  databaseUrl?: string;
  env?: Record<string, string>;
  /** Start on this DATA_DIR (a restart of an earlier server); it is then left in place on stop. */
  dataDir?: string;
}

export interface RunningServer {
  baseUrl: string;
  pid: number;
  dataDir: string;
  /** Resident set size of the server process in bytes (from /proc), or NaN off Linux. */
  rss(): number;
  /** The largest resident set size since the process started or `resetPeakRss` (VmHWM), or NaN off Linux. */
  peakRss(): number;
  /** Starts the peak over from the present size; false where the kernel does not allow it. */
  resetPeakRss(): boolean;
  stop(): Promise<void>;
}

/** Env shared by the child and in-process servers: loopback, quiet logs, bench plan limits. */
export function benchServerEnv(
  dataDir: string,
  options: ServerOptions,
  port: number,
): Record<string, string> {
  return {
    PORT: String(port),
    HOST: "127.0.0.1",
    DATA_DIR: dataDir,
    LOG_LEVEL: "warn",
    JWT_SECRET: "bench-secret-bench-secret-bench-secret-0123456789",
    PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
    PLANS_FILE: writeBenchPlansFile(dataDir),
    TRAININGS_PER_DAY: "100000",
    JOB_CONCURRENCY: "1",
    ...(options.databaseUrl ? { DATABASE_URL: options.databaseUrl } : {}),
    ...options.env,
  };
}

/**
 * The real service (`src/main.ts`) as a child process on 127.0.0.1, so the load generator in this process
 * does not share the server's event loop. Output goes to DATA_DIR/server.log for post-mortems.
 */
export async function startChildServer(options: ServerOptions): Promise<RunningServer> {
  const ownDir = options.dataDir === undefined;
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), "rs-bench-"));
  const port = await freePort();
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v !== undefined && !k.startsWith("DATABASE_") && k !== "PORT" && k !== "HOST") env[k] = v;
  }
  Object.assign(env, benchServerEnv(dataDir, options, port));
  const logFile = join(dataDir, "server.log");
  const out = openSync(logFile, "a");
  const child = Bun.spawn([process.execPath, "run", join(options.repoRoot, "src", "main.ts")], {
    cwd: options.repoRoot,
    env,
    stdout: out,
    stderr: out,
  });
  const baseUrl = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 180_000;
  let ready = false;
  while (Date.now() < deadline && child.exitCode === null) {
    try {
      const res = await fetch(`${baseUrl}/health`);
      if (res.ok) {
        ready = true;
        break;
      }
    } catch {
      // not listening yet
    }
    await Bun.sleep(100);
  }
  const stop = async () => {
    if (child.exitCode === null) {
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
      await child.exited;
      clearTimeout(timer);
    }
    if (ownDir) rmSync(dataDir, { recursive: true, force: true });
  };
  if (!ready) {
    const log = safeRead(logFile).slice(-2000);
    await stop();
    throw new Error(`the service did not become healthy within 180 s; its log ends:\n${log}`);
  }
  return {
    baseUrl,
    pid: child.pid,
    dataDir,
    rss: () => processRss(child.pid),
    peakRss: () => processPeakRss(child.pid),
    resetPeakRss: () => resetPeakRss(child.pid),
    stop,
  };
}

export function processRss(pid: number): number {
  return processStatusBytes(pid, "VmRSS");
}

/** The largest resident set size since the process started or `resetPeakRss` (VmHWM), in bytes, or NaN. */
export function processPeakRss(pid: number): number {
  return processStatusBytes(pid, "VmHWM");
}

/** A size line of /proc/<pid>/status (VmRSS, VmHWM, ...) in bytes, or NaN. */
function processStatusBytes(pid: number, field: string): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const m = new RegExp(`${field}:\\s+(\\d+)\\s+kB`).exec(status);
    return m ? Number(m[1]) * 1024 : Number.NaN;
  } catch {
    return Number.NaN;
  }
}

/** Resets the process's peak resident size to its present one (writing 5 to /proc/<pid>/clear_refs). */
export function resetPeakRss(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, "5");
    return true;
  } catch {
    return false;
  }
}

/**
 * The process's resident size once it has stopped moving: read every 250 ms from `minMs` on, until two
 * readings 500 ms apart are within 1 MiB (or `maxMs` has passed). Loading a tenant leaves decoded buffers,
 * bulk-read rows and garbage behind for a moment: the 20k-product tenant's process was 24-44 MiB larger as
 * its first query returned than a second later (above the empty process: 63-77 MiB against 32-39 MiB), so a
 * reading taken then is neither what the process keeps nor its peak (VmHWM tells that).
 */
export async function settledRss(
  read: () => number,
  minMs = 2_000,
  maxMs = 15_000,
): Promise<{ bytes: number; afterMs: number }> {
  const started = performance.now();
  await Bun.sleep(minMs);
  const readings: number[] = [read()];
  while (performance.now() - started < maxMs) {
    await Bun.sleep(250);
    readings.push(read());
    const last = readings.length - 1;
    if (last >= 2 && Math.abs(readings[last]! - readings[last - 2]!) < 2 ** 20) break;
  }
  return { bytes: readings[readings.length - 1]!, afterMs: performance.now() - started };
}

function safeRead(file: string): string {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return "";
  }
}
