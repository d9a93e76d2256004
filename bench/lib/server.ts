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
  return { baseUrl, pid: child.pid, dataDir, rss: () => processRss(child.pid), stop };
}

export function processRss(pid: number): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const m = /VmRSS:\s+(\d+)\s+kB/.exec(status);
    return m ? Number(m[1]) * 1024 : Number.NaN;
  } catch {
    return Number.NaN;
  }
}

function safeRead(file: string): string {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return "";
  }
}
