/**
 * The service as a real child process (`bun src/main.ts`) on a free port, on the suite's store (PGlite, or
 * the Postgres of TEST_DATABASE_URL), with a plan table roomy enough for a test's bursts, and a small
 * HTTP helper to set it up from outside.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { childEnv, type ServerProcess, startServer, TEST_JWT_SECRET } from "../deploy/support/server-process";
import { makeTempDir } from "./temp-dirs";

export interface Service {
  server: ServerProcess;
  baseUrl: string;
  call<T = any>(
    method: string,
    path: string,
    options?: { body?: unknown; apiKey?: string; token?: string },
  ): Promise<{ status: number; body: T }>;
}

/** The service as `bun src/main.ts` on a free port, on the suite's store, with a roomy plan table. */
export async function startService(settings: Record<string, string> = {}): Promise<Service> {
  const dir = makeTempDir("rs-browser-");
  const plans = join(dir, "plans.json");
  const limits = {
    requestsPerMinute: 100_000,
    monthlyRequests: 10_000_000,
    maxProducts: 10_000,
    maxEndUsers: 10_000,
    trainingsPerDay: 100,
  };
  writeFileSync(
    plans,
    JSON.stringify({ FREE: { name: "FREE", priceMonthly: 0, currency: "USD", limits, features: [] } }),
  );
  const server = await startServer({
    env: childEnv({
      PORT: "0",
      HOST: "127.0.0.1",
      DATA_DIR: join(dir, "data"),
      JWT_SECRET: TEST_JWT_SECRET,
      PLANS_FILE: plans,
      LOG_LEVEL: "info",
      DATABASE_URL: process.env.TEST_DATABASE_URL,
      ...settings,
    }),
  });
  const call: Service["call"] = async (method, path, options = {}) => {
    const headers: Record<string, string> = {};
    if (options.body !== undefined) headers["content-type"] = "application/json";
    if (options.apiKey !== undefined) headers["x-api-key"] = options.apiKey;
    if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
    const res = await fetch(server.baseUrl + path, {
      method,
      headers,
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
    });
    const text = await res.text();
    return { status: res.status, body: text === "" ? undefined : JSON.parse(text) };
  };
  return { server, baseUrl: server.baseUrl, call };
}
