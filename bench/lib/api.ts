import type { SyntheticDataset } from "../data/synthetic";
import { catalogueRecords, interactionRecords } from "./records";
import { NotAvailable } from "./types";

export interface ApiResponse<T = any> {
  status: number;
  body: T;
}

/** A thin JSON client for the service's public API, as a shop's back end would call it. */
export class ApiClient {
  constructor(
    readonly baseUrl: string,
    readonly apiKey?: string,
  ) {}

  async request<T = any>(method: string, path: string, body?: unknown): Promise<ApiResponse<T>> {
    const headers: Record<string, string> = {};
    if (this.apiKey) headers["x-api-key"] = this.apiKey;
    if (body !== undefined) headers["content-type"] = "application/json";
    const res = await fetch(`${this.baseUrl}${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text === "" ? undefined : JSON.parse(text);
    } catch {
      // not JSON
    }
    return { status: res.status, body: parsed as T };
  }

  async expect<T = any>(method: string, path: string, body: unknown, statuses: number[]): Promise<T> {
    const res = await this.request<T>(method, path, body);
    if (!statuses.includes(res.status)) {
      throw new Error(`${method} ${path} answered ${res.status}: ${JSON.stringify(res.body).slice(0, 500)}`);
    }
    return res.body;
  }
}

/** "METHOD /path/{}" for every operation in the service's OpenAPI description. */
export async function publishedRoutes(baseUrl: string): Promise<Set<string>> {
  const res = await fetch(`${baseUrl}/api/v1/public-openapi.json`);
  if (!res.ok) throw new Error(`OpenAPI description answered ${res.status}`);
  const spec = (await res.json()) as { paths?: Record<string, Record<string, unknown>> };
  const out = new Set<string>();
  for (const [path, ops] of Object.entries(spec.paths ?? {})) {
    for (const method of Object.keys(ops)) out.add(`${method.toUpperCase()} ${normalizePath(path)}`);
  }
  return out;
}

function normalizePath(path: string): string {
  return (
    path
      .replace(/\{[^}]+\}|:[A-Za-z_][A-Za-z0-9_]*|\*/g, "{}")
      .replace(/\/+$/, "")
      .toLowerCase() || "/"
  );
}

/** Throws NotAvailable naming the route when the running service does not publish it. */
export function requireRoute(routes: Set<string>, method: string, path: string): void {
  if (!routes.has(`${method.toUpperCase()} ${normalizePath(path)}`)) {
    throw new NotAvailable(`${method.toUpperCase()} ${path} is not served`);
  }
}

export function routeMissing(routes: Set<string>, method: string, path: string): string | null {
  return routes.has(`${method.toUpperCase()} ${normalizePath(path)}`)
    ? null
    : `not available yet: ${method.toUpperCase()} ${path} is not served`;
}

export interface Tenant {
  apiKey: string;
  accountId: number;
  client: ApiClient;
}

let tenantCounter = 0;

/** Signs up a fresh account through the public register route and returns its first (secret) API key. */
export async function registerTenant(baseUrl: string, routes: Set<string>, label: string): Promise<Tenant> {
  requireRoute(routes, "POST", "/api/v1/auth/register");
  const anonymous = new ApiClient(baseUrl);
  const email = `bench-${label}-${Date.now()}-${process.pid}-${tenantCounter++}@example.com`;
  const body = await anonymous.expect(
    "POST",
    "/api/v1/auth/register",
    { accountName: `bench ${label}`, email, password: "bench-password-123" },
    [200, 201],
  );
  if (typeof body?.apiKey !== "string")
    throw new Error(`register returned no apiKey: ${JSON.stringify(body)}`);
  return {
    apiKey: body.apiKey,
    accountId: Number(body.accountId),
    client: new ApiClient(baseUrl, body.apiKey),
  };
}

const FINAL_INGESTION = new Set(["completed", "completed_with_errors", "failed"]);

/** Polls an ingestion job until it ends; returns its final status body. */
export async function waitForIngestionJob(client: ApiClient, jobId: number, timeoutMs: number): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await client.request("GET", `/api/v1/ingestion/batch/${jobId}`);
    if ((res.status === 200 || res.status === 207) && FINAL_INGESTION.has(res.body?.status)) return res.body;
    if (res.status !== 200 && res.status !== 207) {
      throw new Error(
        `GET /api/v1/ingestion/batch/${jobId} answered ${res.status}: ${JSON.stringify(res.body)}`,
      );
    }
    if (Date.now() > deadline)
      throw new Error(`ingestion job ${jobId} did not finish in ${timeoutMs / 1000} s`);
    await Bun.sleep(20);
  }
}

/** Starts a training job through the API and waits for it; returns the final job status. */
export async function trainAndWait(client: ApiClient, timeoutMs: number, options?: unknown): Promise<any> {
  const started = await client.expect("POST", "/api/v1/pipeline/train", options ?? {}, [200, 202]);
  const jobId = started.jobId;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    // A service busy publishing the model may leave one poll unanswered for a while: poll again.
    const res = await client
      .request("GET", `/api/v1/pipeline/jobs/${jobId}/status`)
      .catch((error: unknown) => {
        if ((error as Error).name === "TimeoutError" && Date.now() < deadline) return null;
        throw error;
      });
    if (res === null) continue;
    if (res.status !== 200)
      throw new Error(`training status answered ${res.status}: ${JSON.stringify(res.body)}`);
    if (res.body.status === "completed") return res.body;
    if (res.body.status === "failed") throw new Error(`training job ${jobId} failed: ${res.body.error}`);
    if (Date.now() > deadline)
      throw new Error(`training job ${jobId} did not finish in ${timeoutMs / 1000} s`);
    await Bun.sleep(200);
  }
}

const INGEST_BATCH = 1000;

/**
 * A synthetic data set sent through the batch route, 1,000 records per request as a shop's back end would:
 * the catalogue first (interactions name its products), then the interactions; waits for every job and
 * counts the record errors they report.
 */
export async function ingestSynthetic(
  client: ApiClient,
  data: SyntheticDataset,
  log: (message: string) => void = () => {},
): Promise<{ seconds: number; recordErrors: number }> {
  const started = performance.now();
  const { products, users } = catalogueRecords(data);
  const events = interactionRecords(data);
  const jobs: number[] = [];
  const post = async (body: unknown) => {
    const res = await client.expect("POST", "/api/v1/ingestion/batch", body, [202]);
    jobs.push(Number(res.jobId));
  };
  for (let i = 0; i < Math.max(products.length, users.length); i += INGEST_BATCH) {
    await post({
      products: products.slice(i, i + INGEST_BATCH),
      users: users.slice(i, i + INGEST_BATCH),
      interactions: [],
    });
  }
  let recordErrors = 0;
  const waitAll = async () => {
    for (const job of jobs.splice(0)) {
      const done = await waitForIngestionJob(client, job, 1_800_000);
      recordErrors += Array.isArray(done.errors) ? done.errors.length : 0;
    }
  };
  await waitAll();
  log("catalogue in; sending interactions");
  for (let i = 0; i < events.length; i += INGEST_BATCH)
    await post({ products: [], users: [], interactions: events.slice(i, i + INGEST_BATCH) });
  await waitAll();
  return { seconds: (performance.now() - started) / 1000, recordErrors };
}
