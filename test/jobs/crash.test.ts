/**
 * Crash safety end to end, on Postgres: the real service runs as a child process, is killed with SIGKILL in
 * the middle of a bulk-ingestion job, and is started again on the same database and DATA_DIR. The restarted
 * process reclaims the job it left behind and finishes it; every accepted record must then be applied
 * exactly once (interactions are plain inserts, so a replayed chunk would show up as extra rows).
 * The first process runs test/jobs/slow-ingestion-service.ts: the service with each chunk's transaction held
 * open for a while, so the kill lands mid-job, usually inside an open chunk transaction, which Postgres then
 * rolls back. The restart is the plain src/main.ts.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { resolve } from "node:path";
import postgres from "postgres";
import { makeTempDir } from "../helpers/temp-dirs";

const adminUrl = process.env.TEST_DATABASE_URL;
const repoRoot = resolve(import.meta.dir, "../..");

interface Service {
  process: ReturnType<typeof Bun.spawn>;
  baseUrl: string;
  output: string[];
}

async function startService(env: Record<string, string>, entry = ["src/main.ts"]): Promise<Service> {
  const child = Bun.spawn([process.execPath, "run", ...entry], {
    cwd: repoRoot,
    env: { ...process.env, ...env },
    stdout: "pipe",
    stderr: "pipe",
  });
  const output: string[] = [];
  const baseUrl = await new Promise<string>((resolveUrl, reject) => {
    const timer = setTimeout(() => reject(new Error(`service did not start:\n${output.join("\n")}`)), 60_000);
    const decoder = new TextDecoder();
    let pending = "";
    void (async () => {
      for await (const chunk of child.stdout as ReadableStream<Uint8Array>) {
        pending += decoder.decode(chunk, { stream: true });
        let newline = pending.indexOf("\n");
        while (newline >= 0) {
          const line = pending.slice(0, newline);
          pending = pending.slice(newline + 1);
          output.push(line);
          try {
            const entry = JSON.parse(line) as { msg?: string; url?: string };
            if (entry.msg === "listening" && entry.url !== undefined) {
              clearTimeout(timer);
              resolveUrl(entry.url);
            }
          } catch {
            // not a log line
          }
          newline = pending.indexOf("\n");
        }
      }
    })();
    void (async () => {
      for await (const chunk of child.stderr as ReadableStream<Uint8Array>)
        output.push(new TextDecoder().decode(chunk));
    })();
    void child.exited.then((code) => reject(new Error(`service exited with ${code}:\n${output.join("\n")}`)));
  });
  return { process: child, baseUrl, output };
}

async function call(
  service: Service,
  method: string,
  path: string,
  init: { apiKey?: string; body?: unknown } = {},
) {
  const res = await fetch(`${service.baseUrl}${path}`, {
    method,
    headers: {
      "content-type": "application/json",
      ...(init.apiKey === undefined ? {} : { "x-api-key": init.apiKey }),
    },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, any> };
}

const cleanups: (() => Promise<void> | void)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

describe.skipIf(adminUrl === undefined)("crash safety (Postgres)", () => {
  test("a bulk job killed with SIGKILL mid-way is resumed after restart and applies every record exactly once", async () => {
    const admin = postgres(adminUrl!, { max: 1, onnotice: () => {} });
    const dbName = `rs_crash_${process.pid}_${Date.now().toString(36)}`;
    await admin.unsafe(`create database ${dbName}`);
    cleanups.push(async () => {
      await admin.unsafe(`drop database if exists ${dbName} with (force)`);
      await admin.end({ timeout: 5 });
    });
    const dbUrl = new URL(adminUrl!);
    dbUrl.pathname = `/${dbName}`;
    const dataDir = makeTempDir("rs-crash-");
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    const env = {
      DATABASE_URL: dbUrl.toString(),
      DATA_DIR: dataDir,
      PORT: "0",
      HOST: "127.0.0.1",
      LOG_LEVEL: "info",
      JWT_SECRET: "crash-test-secret-crash-test-secret-0123456789",
      JOB_CONCURRENCY: "1",
      INGESTION_CHUNK_SIZE: "50",
    };

    const first = await startService(env, ["test/jobs/slow-ingestion-service.ts", "300"]);
    cleanups.push(() => {
      first.process.kill("SIGKILL");
    });
    const registered = await call(first, "POST", "/api/v1/auth/register", {
      body: {
        accountName: "Crash shop",
        email: `crash-${dbName}@example.com`,
        password: "correct horse battery",
      },
    });
    expect(registered.status).toBe(200);
    const apiKey = registered.body.apiKey as string;

    // 300 products (p0..p9 invalid), 200 users, 600 interactions (those naming p0..p9 fail: 20 of them).
    const products = Array.from({ length: 300 }, (_, i) => ({
      externalId: `p${i}`,
      name: `Product ${i}`,
      price: i < 10 ? 0 : 10 + i,
      category: `c/${i % 7}`,
    }));
    const users = Array.from({ length: 200 }, (_, i) => ({ externalId: `u${i}` }));
    const interactions = Array.from({ length: 600 }, (_, i) => ({
      external_user_id: `u${i % 200}`,
      external_product_id: `p${i % 300}`,
      interaction_type: i % 3 === 0 ? "PURCHASE" : "VIEW",
      value: 1,
    }));
    const validInteractions = interactions.filter((_, i) => i % 300 >= 10);
    const validPurchases = validInteractions.filter((x) => x.interaction_type === "PURCHASE").length;

    const accepted = await call(first, "POST", "/api/v1/ingestion/batch", {
      apiKey,
      body: { products, users, interactions },
    });
    expect(accepted.status).toBe(202);
    const jobPath = `/api/v1/ingestion/batch/${accepted.body.jobId}`;

    // Kill once some chunks have committed, well before the end (23 chunks of 300 ms each).
    let before: Record<string, any> = {};
    const deadline = Date.now() + 60_000;
    for (;;) {
      before = (await call(first, "GET", jobPath, { apiKey })).body;
      const done = before.processedProducts + before.processedUsers + before.processedInteractions;
      if (done >= 100 || before.status !== "processing" || Date.now() > deadline) break;
      await Bun.sleep(30);
    }
    first.process.kill("SIGKILL");
    await first.process.exited;
    expect(before.status).toBe("processing");
    const doneBefore = before.processedProducts + before.processedUsers + before.processedInteractions;
    expect(doneBefore).toBeGreaterThan(0);
    expect(doneBefore).toBeLessThan(1100);

    const second = await startService(env);
    cleanups.push(() => {
      second.process.kill("SIGTERM");
    });
    let after: { status: number; body: Record<string, any> } = { status: 0, body: {} };
    const finishDeadline = Date.now() + 60_000;
    for (;;) {
      after = await call(second, "GET", jobPath, { apiKey });
      if (after.body.status !== "processing" || Date.now() > finishDeadline) break;
      await Bun.sleep(50);
    }
    expect(after.status).toBe(207);
    expect(after.body).toMatchObject({
      status: "completed_with_errors",
      processedProducts: 300,
      processedUsers: 200,
      processedInteractions: 600,
    });
    // Each invalid record reported once: no chunk's errors were recorded twice.
    expect(after.body.errors).toHaveLength(30);

    const db = postgres(dbUrl.toString(), { max: 1, onnotice: () => {} });
    try {
      const [counts] = await db<
        { products: number; users: number; interactions: number; orders: number; attempts: number }[]
      >`
        select (select count(*)::int from products) as products,
               (select count(*)::int from end_users) as users,
               (select count(*)::int from interactions) as interactions,
               (select count(*)::int from orders) as orders,
               (select attempts from ingestion_jobs where id = ${accepted.body.jobId}) as attempts`;
      expect(counts).toEqual({
        products: 290,
        users: 200,
        interactions: validInteractions.length,
        orders: validPurchases,
        attempts: 2,
      });
      const duplicates = await db`select end_user_id, product_id, interaction_type, count(*)
        from interactions group by 1, 2, 3 having count(*) > 1`;
      expect(duplicates).toHaveLength(0);
    } finally {
      await db.end({ timeout: 5 });
    }
  }, 180_000);
});
