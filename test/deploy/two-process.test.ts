/**
 * Two real service processes on different ports against one fresh Postgres database (and one Redis):
 * what several processes must agree on without sharing memory. Postgres only (TEST_DATABASE_URL). Each
 * check uses its own tenant and is skipped, with the reason printed, when a route it needs is missing
 * from the OpenAPI document.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { RedisClient } from "bun";
import postgres from "postgres";
import { BUILT_IN_PLANS } from "../../src/modules/plans/catalog";
import { makeTempDir } from "../helpers/temp-dirs";
import { childEnv, type ServerProcess, startServer } from "./support/server-process";

const adminUrl = process.env.TEST_DATABASE_URL;
/** A Redis database of its own, flushed at the start, so counters from other runs cannot interfere. */
const redisUrl = process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379/11";
const REQUESTS_PER_MINUTE = 20;

const dir = makeTempDir("rs-two-");
let databaseUrl = "";
let createdDatabase: string | undefined;
let redisAvailable = false;
let a: ServerProcess | undefined;
let b: ServerProcess | undefined;
let paths: Record<string, Record<string, unknown>> = {};

async function prepareDatabase(url: string): Promise<string> {
  const admin = postgres(url, { max: 1, onnotice: () => {} });
  const name = `rs_two_${process.pid}_${Date.now().toString(36)}`;
  try {
    await admin.unsafe(`create database ${name}`);
    createdDatabase = name;
    const fresh = new URL(url);
    fresh.pathname = `/${name}`;
    return fresh.toString();
  } catch (error) {
    console.warn(`could not create a fresh database (${(error as Error).message}); using TEST_DATABASE_URL`);
    return url;
  } finally {
    await admin.end({ timeout: 5 });
  }
}

async function prepareRedis(): Promise<boolean> {
  const client = new RedisClient(redisUrl, { connectionTimeout: 2000, autoReconnect: false });
  try {
    await client.send("FLUSHDB", []);
    return true;
  } catch (error) {
    console.warn(`Redis at ${redisUrl} unreachable (${(error as Error).message}): rate-limit check skipped`);
    return false;
  } finally {
    client.close();
  }
}

beforeAll(async () => {
  if (adminUrl === undefined) return;
  databaseUrl = await prepareDatabase(adminUrl);
  redisAvailable = await prepareRedis();
  const plansFile = join(dir, "plans.json");
  const plans = structuredClone(BUILT_IN_PLANS);
  const free = plans.FREE as (typeof plans)[string];
  free.limits.requestsPerMinute = REQUESTS_PER_MINUTE;
  free.limits.trainingsPerDay = 50;
  writeFileSync(plansFile, JSON.stringify(plans));
  const settings = (name: string) =>
    childEnv({
      PORT: "0",
      HOST: "127.0.0.1",
      DATA_DIR: join(dir, name),
      DATABASE_URL: databaseUrl,
      ...(redisAvailable ? { REDIS_URL: redisUrl } : {}),
      JWT_SECRET: "two-process-secret-two-process-secret-0123456789",
      PAYMENT_WEBHOOK_SECRET: "two-process-webhook-secret-0123456789",
      PLANS_FILE: plansFile,
      JOB_CONCURRENCY: "1",
      LOG_LEVEL: "info",
    });
  // Started together on an empty database: the migration advisory lock must let exactly one migrate.
  [a, b] = await Promise.all([startServer({ env: settings("a") }), startServer({ env: settings("b") })]);
  paths = ((await (await fetch(`${a.baseUrl}/api/v1/public-openapi.json`)).json()) as { paths: typeof paths })
    .paths;
}, 180_000);

afterAll(async () => {
  await Promise.all([a?.stop(), b?.stop()]);
  if (createdDatabase !== undefined && adminUrl !== undefined) {
    const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
    await admin.unsafe(`drop database if exists ${createdDatabase} with (force)`).catch(() => {});
    await admin.end({ timeout: 5 });
  }
  rmSync(dir, { recursive: true, force: true });
});

interface Reply<T> {
  status: number;
  headers: Headers;
  body: T;
}

async function call<T = Record<string, any>>(
  server: ServerProcess | undefined,
  method: string,
  path: string,
  options: { body?: unknown; apiKey?: string; token?: string } = {},
): Promise<Reply<T>> {
  const headers: Record<string, string> = {};
  if (options.body !== undefined) headers["content-type"] = "application/json";
  if (options.apiKey !== undefined) headers["x-api-key"] = options.apiKey;
  if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
  const res = await fetch(`${(server as ServerProcess).baseUrl}${path}`, {
    method,
    headers,
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: (text === "" ? {} : JSON.parse(text)) as T };
}

/** The routes a check needs; prints why and returns false when one is missing. */
function routesPresent(check: string, needed: [string, string][]): boolean {
  const missing = needed.filter(([method, path]) => paths[path]?.[method] === undefined);
  if (missing.length === 0) return true;
  console.warn(
    `skipped "${check}": missing ${missing.map(([m, p]) => `${m.toUpperCase()} ${p}`).join(", ")}`,
  );
  return false;
}

let tenantSeq = 0;
async function registerTenant(label: string): Promise<{ token: string; apiKey: string; accountId: number }> {
  const email = `${label}-${++tenantSeq}-${Date.now().toString(36)}@two.example.com`;
  const res = await call<{ accessToken: string; apiKey: string; accountId: number }>(
    a,
    "POST",
    "/api/v1/auth/register",
    { body: { accountName: `Two ${label}`, email, password: "two-process-pass" } },
  );
  expect([200, 201]).toContain(res.status);
  return { token: res.body.accessToken, apiKey: res.body.apiKey, accountId: res.body.accountId };
}

async function waitFor<T>(what: string, timeoutMs: number, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(250);
  }
}

describe.skipIf(adminUrl === undefined)("two service processes on one Postgres", () => {
  test("both start on the same empty database; the migrations were applied by exactly one", () => {
    const applied = [a, b].filter((s) =>
      s?.output.some((line) => line.includes('"msg":"migrations applied"')),
    );
    expect(applied.length).toBeLessThanOrEqual(1);
    // On a reused (already migrated) database nobody has anything left to apply.
    if (createdDatabase !== undefined) expect(applied.length).toBe(1);
  });

  test("an ingestion batch accepted by one process is processed exactly once", async () => {
    const batch = "/api/v1/ingestion/batch";
    if (
      !routesPresent("job processed once", [
        ["post", "/api/v1/auth/register"],
        ["post", batch],
        ["get", `${batch}/{job_id}`],
      ])
    ) {
      return;
    }
    const tenant = await registerTenant("jobs");
    const jobIds: number[] = [];
    for (let n = 0; n < 4; n++) {
      const products = Array.from({ length: 5 }, (_, i) => ({
        externalId: `b${n}-p${i}`,
        name: `Product ${n}.${i}`,
        price: 10 + i,
        category: "tools",
      }));
      const interactions = Array.from({ length: 10 }, (_, i) => ({
        external_user_id: `b${n}-u${i % 3}`,
        external_product_id: `b${n}-p${i % 5}`,
        interaction_type: "VIEW",
        value: 1,
      }));
      const accepted = await call<{ jobId: number }>(a, "POST", batch, {
        apiKey: tenant.apiKey,
        body: { products, users: [], interactions },
      });
      expect(accepted.status).toBe(202);
      jobIds.push(accepted.body.jobId);
    }
    for (const jobId of jobIds) {
      const done = await waitFor(`batch ${jobId}`, 90_000, async () => {
        const res = await call<{ status: string; processedInteractions: number; processedProducts: number }>(
          b,
          "GET",
          `${batch}/${jobId}`,
          { apiKey: tenant.apiKey },
        );
        return res.body.status === "processing" ? undefined : res.body;
      });
      expect(done).toMatchObject({ status: "completed", processedProducts: 5, processedInteractions: 10 });
    }
    const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
    try {
      const [counted] = await sql<{ n: number }[]>`
        select count(*)::int as n from interactions where account_id = ${tenant.accountId}`;
      expect(counted?.n).toBe(40);
      const attempts = await sql<{ attempts: number }[]>`
        select attempts from ingestion_jobs where account_id = ${tenant.accountId}`;
      expect(attempts.map((row) => row.attempts)).toEqual([1, 1, 1, 1]);
    } finally {
      await sql.end({ timeout: 5 });
    }
  }, 150_000);

  test("an API key revoked through one process is refused by the other at once", async () => {
    const keys = "/api/v1/api-keys/";
    if (
      !routesPresent("key revocation", [
        ["post", keys],
        ["delete", "/api/v1/api-keys/{api_key_id}"],
        ["get", "/api/v1/api-keys/current"],
      ])
    ) {
      return;
    }
    const tenant = await registerTenant("revoke");
    const created = await call<{ id: number; api_key: string }>(a, "POST", keys, {
      token: tenant.token,
      body: { name: "to be revoked" },
    });
    expect(created.status).toBe(201);
    const key = created.body.api_key;
    // B has now seen and cached the key: revocation must reach its cache, not just the database.
    expect((await call(b, "GET", "/api/v1/api-keys/current", { apiKey: key })).status).toBe(200);
    expect((await call(b, "GET", "/api/v1/api-keys/current", { apiKey: key })).status).toBe(200);
    const revoked = await call(a, "DELETE", `/api/v1/api-keys/${created.body.id}`, { token: tenant.token });
    expect([200, 204]).toContain(revoked.status);
    const refused = await call<{ errorCode: string }>(b, "GET", "/api/v1/api-keys/current", { apiKey: key });
    expect(refused.status).toBe(401);
    expect(refused.body.errorCode).toBe("INVALID_API_KEY");
  }, 60_000);

  test("rate limits are shared: both processes together allow one plan limit per minute", async () => {
    const route = "/api/v1/api-keys/current";
    if (!redisAvailable) {
      console.warn('skipped "shared rate limits": no Redis');
      return;
    }
    if (!routesPresent("shared rate limits", [["get", route]])) return;
    const tenant = await registerTenant("rate");
    let first = await call(a, "GET", route, { apiKey: tenant.apiKey });
    const limit = Number(first.headers.get("x-ratelimit-limit"));
    if (!(limit > 0)) {
      console.warn(`skipped "shared rate limits": ${route} sends no X-RateLimit-Limit`);
      return;
    }
    expect(limit).toBe(REQUESTS_PER_MINUTE);
    // A fixed window that is about to roll over would reset the count mid-check: start in a fresh one.
    const resetAt = Number(first.headers.get("x-ratelimit-reset"));
    const secondsLeft = resetAt > 1e9 ? resetAt - Date.now() / 1000 : resetAt;
    if (secondsLeft < 20) {
      await Bun.sleep((secondsLeft + 1) * 1000);
      first = await call(a, "GET", route, { apiKey: tenant.apiKey });
    }
    expect(first.status).toBe(200);
    let allowed = 1;
    let limitedBy: string | undefined;
    for (let i = 0; i < 2 * limit + 2 && limitedBy === undefined; i++) {
      const server = i % 2 === 0 ? b : a;
      const res = await call(server, "GET", route, { apiKey: tenant.apiKey });
      if (res.status === 200) allowed++;
      else if (res.status === 429) limitedBy = server === a ? "a" : "b";
      else throw new Error(`unexpected ${res.status}`);
    }
    expect(limitedBy).toBeDefined();
    expect(allowed).toBe(limit);
  }, 120_000);

  test("a model trained through one process is served by the other after NOTIFY", async () => {
    const similar = "/api/v1/recommendations/products/external/{external_product_id}/similar";
    const jobStatus = "/api/v1/pipeline/jobs/{job_id}/status";
    if (
      !routesPresent("model served by the other process", [
        ["post", "/api/v1/sandbox/quick-start"],
        ["get", jobStatus],
        ["get", "/api/v1/products/"],
        ["get", similar],
      ])
    ) {
      return;
    }
    const tenant = await registerTenant("model");
    const started = await call<{ jobId: number | null }>(a, "POST", "/api/v1/sandbox/quick-start", {
      apiKey: tenant.apiKey,
    });
    expect(started.status).toBe(200);
    expect(started.body.jobId).not.toBeNull();
    const listed = await call<{ items: { externalId: string }[] }>(a, "GET", "/api/v1/products/", {
      apiKey: tenant.apiKey,
    });
    const productId = listed.body.items[0]?.externalId as string;
    const similarOn = async (server: ServerProcess | undefined) => {
      const res = await call<{ items: { externalId: string; source: string }[] }>(
        server,
        "GET",
        `/api/v1/recommendations/products/external/${encodeURIComponent(productId)}/similar?limit=10`,
        { apiKey: tenant.apiKey },
      );
      expect(res.status).toBe(200);
      return res.body.items.map((item) => `${item.externalId}:${item.source}`).join(",");
    };
    const beforeStatus = await call<{ status: string }>(
      a,
      "GET",
      `/api/v1/pipeline/jobs/${started.body.jobId}/status`,
      {
        apiKey: tenant.apiKey,
      },
    );
    const beforeOnB = await similarOn(b);
    const stillUntrained = beforeStatus.body.status === "queued" || beforeStatus.body.status === "running";

    const finished = await waitFor("training", 240_000, async () => {
      const res = await call<{ status: string; metrics: { decision?: { published: boolean } } | null }>(
        a,
        "GET",
        `/api/v1/pipeline/jobs/${started.body.jobId}/status`,
        { apiKey: tenant.apiKey },
      );
      return res.body.status === "queued" || res.body.status === "running" ? undefined : res.body;
    });
    expect(finished.status).toBe("completed");
    expect(finished.metrics?.decision?.published).toBe(true);

    const onA = await similarOn(a);
    // Publication reaches B through NOTIFY; allow the notification a few seconds to arrive.
    const onB = await waitFor("process B to serve the new model", 15_000, async () => {
      const current = await similarOn(b);
      return current === onA ? current : undefined;
    });
    expect(onB).toBe(onA);
    if (stillUntrained && beforeOnB !== onA) {
      expect(onB).not.toBe(beforeOnB);
    } else {
      console.warn(
        "note: the pre-training answer could not be told apart from the model's; checked equality only",
      );
    }
  }, 300_000);
});
