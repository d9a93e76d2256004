/**
 * WORKERS=2: two server processes on one port (SO_REUSEPORT) against one Postgres database. Both must
 * answer on the port, SIGTERM to the first must stop both, and more than one worker on the embedded store
 * must stop start-up naming the setting. The port-sharing checks need Postgres (TEST_DATABASE_URL).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import postgres from "postgres";
import { makeTempDir } from "../helpers/temp-dirs";
import { childEnv, MAIN, type ServerProcess, startServer } from "./support/server-process";

const adminUrl = process.env.TEST_DATABASE_URL;
const METRICS_TOKEN = "workers-test-metrics-token";
const dir = makeTempDir("rs-workers-");
let createdDatabase: string | undefined;
let server: ServerProcess | undefined;

async function freshDatabase(url: string): Promise<string> {
  const admin = postgres(url, { max: 1, onnotice: () => {} });
  const name = `rs_workers_${process.pid}_${Date.now().toString(36)}`;
  try {
    await admin.unsafe(`create database ${name}`);
    createdDatabase = name;
  } finally {
    await admin.end({ timeout: 5 });
  }
  const fresh = new URL(url);
  fresh.pathname = `/${name}`;
  return fresh.toString();
}

/** The pid of the process that answered, read from the metrics it served over a new connection. */
async function answeringPid(baseUrl: string): Promise<string> {
  const res = await fetch(`${baseUrl}/metrics`, {
    headers: { authorization: `Bearer ${METRICS_TOKEN}`, connection: "close" },
  });
  expect(res.status).toBe(200);
  const match = /^process_info\{pid="(\d+)"\} 1$/m.exec(await res.text());
  expect(match).not.toBeNull();
  return (match as RegExpExecArray)[1] as string;
}

describe.if(adminUrl !== undefined)("WORKERS=2 on Postgres", () => {
  beforeAll(async () => {
    const databaseUrl = await freshDatabase(adminUrl as string);
    server = await startServer({
      env: childEnv({
        PORT: "0",
        HOST: "127.0.0.1",
        DATA_DIR: join(dir, "data"),
        DATABASE_URL: databaseUrl,
        JWT_SECRET: "workers-test-secret-workers-test-secret-0123456789",
        PAYMENT_WEBHOOK_SECRET: "workers-test-webhook-secret-0123456789",
        METRICS_TOKEN,
        WORKERS: "2",
        LOG_LEVEL: "info",
      }),
    });
  }, 120_000);

  afterAll(async () => {
    await server?.stop();
    if (createdDatabase !== undefined) {
      const admin = postgres(adminUrl as string, { max: 1, onnotice: () => {} });
      await admin.unsafe(`drop database if exists ${createdDatabase} with (force)`).catch(() => {});
      await admin.end({ timeout: 5 });
    }
  });

  test("two processes share the port and both answer requests on it", async () => {
    const base = (server as ServerProcess).baseUrl;
    const pids = new Set<string>();
    // The second worker starts after the first is listening; the kernel spreads new connections over the
    // listening sockets, so a few dozen fresh connections reach both once both listen.
    const deadline = Date.now() + 60_000;
    while (pids.size < 2 && Date.now() < deadline) {
      pids.add(await answeringPid(base));
      if (pids.size < 2) await Bun.sleep(20);
    }
    expect(pids.size).toBe(2);
    expect(pids.has(String((server as ServerProcess).proc.pid))).toBe(true);
    const health = await fetch(`${base}/health`);
    expect(health.status).toBe(200);
  }, 90_000);

  test("SIGTERM to the first process stops every worker and frees the port", async () => {
    const running = server as ServerProcess;
    const base = running.baseUrl;
    const exitCode = await running.stop("SIGTERM");
    server = undefined;
    expect(exitCode).toBe(0);
    const workerExit = running.output.filter((line) => line.includes('"msg":"stopped"'));
    expect(workerExit.length).toBe(2);
    await expect(fetch(`${base}/health`)).rejects.toThrow();
  }, 90_000);
});

describe("WORKERS settings", () => {
  test("more than one worker on the embedded store stops start-up naming WORKERS", async () => {
    const proc = Bun.spawn([process.execPath, MAIN], {
      env: childEnv({ PORT: "0", HOST: "127.0.0.1", DATA_DIR: join(dir, "embedded"), WORKERS: "2" }),
      stdout: "pipe",
      stderr: "pipe",
    });
    const [exitCode, stderr] = await Promise.all([proc.exited, new Response(proc.stderr).text()]);
    expect(exitCode).toBe(78);
    expect(stderr).toContain("WORKERS");
    expect(stderr).toContain("DATABASE_URL");
  }, 30_000);

  test("WORKERS must be a number of processes or auto", async () => {
    const proc = Bun.spawn([process.execPath, MAIN], {
      env: childEnv({ PORT: "0", HOST: "127.0.0.1", DATA_DIR: join(dir, "bad"), WORKERS: "many" }),
      stdout: "pipe",
      stderr: "pipe",
    });
    const [exitCode, stderr] = await Promise.all([proc.exited, new Response(proc.stderr).text()]);
    expect(exitCode).toBe(78);
    expect(stderr).toContain("WORKERS");
  }, 30_000);
});
