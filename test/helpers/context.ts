/**
 * An in-process service for tests: real store (PGlite in memory, or the Postgres named by
 * TEST_DATABASE_URL), real migrations, the real app; requests go through `app.handle`.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import postgres from "postgres";
import { type App, createApp } from "../../src/app";
import { loadConfig } from "../../src/config";
import { type AppDeps, type CreateDepsOptions, createDeps, type Lifecycle } from "../../src/deps";
import { createLogger } from "../../src/shared/logger";
import { removeTempDir, trackTempDir } from "./temp-dirs";

export interface TestResponse<T = unknown> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface RequestOptions {
  body?: unknown;
  /** Sent as X-API-Key. */
  apiKey?: string;
  /** Sent as Authorization: Bearer. */
  token?: string;
  headers?: Record<string, string>;
  query?: Record<string, string | number | boolean | string[] | undefined>;
}

export interface TestContext {
  app: App;
  deps: AppDeps & Lifecycle;
  /** Every log line the service wrote, for checks such as "secrets never reach the logs". */
  logs: string[];
  request<T = any>(method: string, path: string, options?: RequestOptions): Promise<TestResponse<T>>;
  close(): Promise<void>;
}

export const usingPostgres = (): boolean => process.env.TEST_DATABASE_URL !== undefined;

let isolatedDatabases = 0;

/**
 * A database of its own next to TEST_DATABASE_URL's, dropped by `drop`. Contexts with their own plan table
 * use one: on a shared database another context's job worker could claim their bulk jobs and apply its own
 * plans' caps and usage meter, a disagreement no two processes of one deployment have.
 */
async function isolatedDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const base = process.env.TEST_DATABASE_URL!;
  const admin = postgres(base, { max: 1, onnotice: () => {} });
  const name = `${new URL(base).pathname.slice(1)}_own_${++isolatedDatabases}`;
  await admin.unsafe(`create database "${name}"`);
  const url = new URL(base);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      await admin.unsafe(`drop database if exists "${name}" with (force)`).catch(() => {});
      await admin.end({ timeout: 5 });
    },
  };
}

export interface TestContextOptions extends Pick<CreateDepsOptions, "servingTuning"> {
  /**
   * On Postgres, a database of its own: for tests of work that reaches every account of the database (a
   * sweep over all accounts), which must not act on other contexts' accounts or count them.
   */
  readonly ownDatabase?: boolean;
}

export async function createTestContext(
  env: Record<string, string> = {},
  { ownDatabase = false, ...options }: TestContextOptions = {},
): Promise<TestContext> {
  const dataDir = mkdtempSync(join(tmpdir(), "rs-test-"));
  // Removed on close, or after the run for contexts never closed (the shared one).
  trackTempDir(dataDir);
  // A context with a payment provider of its own gets its own database too: on a shared one, another
  // context's billing sweepers (another provider's) would act on its subscriptions, which no deployment has.
  const own =
    usingPostgres() && (ownDatabase || env.PLANS_FILE !== undefined || env.PAYMENT_PROVIDER === "mercadopago")
      ? await isolatedDatabase()
      : undefined;
  const config = loadConfig({
    DATA_DIR: dataDir,
    LOG_LEVEL: "debug",
    JWT_SECRET: "test-secret-test-secret-test-secret-0123456789",
    PUBLIC_BASE_URL: "http://localhost:8000",
    // In-process requests have no socket, so every test's sign-ups come from one "client"; the tests of
    // the sign-up limit and of X-Forwarded-For handling set these themselves.
    SIGNUP_LIMIT_PER_HOUR: "0",
    TRUST_PROXY: "1",
    // The erasure-retraining sweep's timer stays out of the way of a run (its test calls the sweep itself):
    // on a shared database it would otherwise retrain other files' accounts mid-test.
    ERASURE_RETRAIN_SWEEP_SECONDS: "21600",
    ...(usingPostgres() ? { DATABASE_URL: own?.url ?? process.env.TEST_DATABASE_URL } : {}),
    ...env,
  });
  const logs: string[] = [];
  const logger = createLogger("debug", (line) => logs.push(line));
  const deps = await createDeps(config, { ...options, logger, pgliteDataDir: "memory://" });
  await deps.start();
  const app = createApp(deps);

  const request = async <T>(
    method: string,
    path: string,
    options: RequestOptions = {},
  ): Promise<TestResponse<T>> => {
    const url = new URL(path, "http://localhost");
    for (const [key, value] of Object.entries(options.query ?? {})) {
      if (value === undefined) continue;
      if (Array.isArray(value)) for (const v of value) url.searchParams.append(key, v);
      else url.searchParams.set(key, String(value));
    }
    const headers: Record<string, string> = { ...options.headers };
    if (options.apiKey !== undefined) headers["x-api-key"] = options.apiKey;
    if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
    let body: string | undefined;
    if (options.body !== undefined) {
      body = typeof options.body === "string" ? options.body : JSON.stringify(options.body);
      headers["content-type"] ??= "application/json";
    }
    const response = await app.handle(new Request(url.toString(), { method, headers, body }));
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = text === "" ? undefined : JSON.parse(text);
    } catch {
      // not JSON: keep the text
    }
    return { status: response.status, headers: response.headers, body: parsed as T, text };
  };

  const close = async () => {
    await deps.stop();
    await own?.drop();
    removeTempDir(dataDir);
  };
  return { app, deps, logs, request, close };
}

let shared: Promise<TestContext> | undefined;

/**
 * One service per test process, shared by the files that need no special settings; every test creates its
 * own tenant, so sharing the store cannot leak between tests.
 */
export function sharedTestContext(): Promise<TestContext> {
  shared ??= createTestContext();
  return shared;
}
