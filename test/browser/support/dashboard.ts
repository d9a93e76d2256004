/**
 * What the dashboard's browser tests share beyond the harness: a fresh account made through the API, records
 * loaded through the bulk route, and a page signed in as the account (its token put where the dashboard
 * keeps it), watching for failed requests and console errors.
 */
import type { Browser, Page } from "playwright-core";
import type { Service } from "./harness";

export interface Owner {
  email: string;
  password: string;
  token: string;
  secretKey: string;
}

export async function signUp(service: Service): Promise<Owner> {
  const email = `dash-${crypto.randomUUID()}@example.com`;
  const password = "dashboard-pass-123";
  const answer = await service.call("POST", "/api/v1/auth/register", {
    body: { accountName: "Dashboard shop", email, password },
  });
  if (answer.status !== 200) throw new Error(`register: ${answer.status} ${JSON.stringify(answer.body)}`);
  return { email, password, token: answer.body.accessToken, secretKey: answer.body.apiKey };
}

/** Sends one bulk batch and waits for its job to finish; answers the job's last status. */
export async function ingest(service: Service, owner: Owner, batch: Record<string, unknown[]>) {
  const accepted = await service.call("POST", "/api/v1/ingestion/batch", {
    apiKey: owner.secretKey,
    body: batch,
  });
  if (accepted.status !== 202) throw new Error(`batch: ${accepted.status} ${JSON.stringify(accepted.body)}`);
  for (let attempt = 0; attempt < 120; attempt++) {
    const job = await service.call("GET", `/api/v1/ingestion/batch/${accepted.body.jobId}`, {
      apiKey: owner.secretKey,
    });
    if (job.body.status !== "processing") return job.body;
    await Bun.sleep(250);
  }
  throw new Error(`batch job ${accepted.body.jobId} did not finish`);
}

export interface DashboardPage {
  page: Page;
  /** Console errors, page errors and failed requests seen so far. */
  problems: string[];
  /** Error answers (status ≥ 400) the page received, as "STATUS METHOD path". */
  errorAnswers: string[];
  close(): Promise<void>;
}

/** A new browser context on the dashboard, signed in with `token` when given, at `path` (under /dashboard). */
export async function openDashboard(
  browser: Browser,
  service: Service,
  path: string,
  token?: string,
): Promise<DashboardPage> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, acceptDownloads: true });
  const page = await context.newPage();
  const problems: string[] = [];
  const errorAnswers: string[] = [];
  page.on("console", (message) => {
    if (message.type() === "error") problems.push(`console: ${message.text()}`);
  });
  page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
  page.on("requestfailed", (request) => {
    if (request.failure()?.errorText === "net::ERR_ABORTED") return;
    problems.push(`request failed: ${request.method()} ${request.url()}`);
  });
  page.on("response", (response) => {
    if (response.status() >= 400) {
      const url = new URL(response.url());
      errorAnswers.push(`${response.status()} ${response.request().method()} ${url.pathname}`);
    }
  });
  if (token !== undefined) {
    await page.goto(`${service.baseUrl}/dashboard/login`);
    await page.evaluate((value) => sessionStorage.setItem("rs-dashboard-token", value), token);
  }
  await page.goto(`${service.baseUrl}/dashboard${path}`);
  return { page, problems, errorAnswers, close: () => context.close() };
}

/** The JSON error body the service answers with, for requests a test makes fail on purpose. */
export function errorBody(message: string, errorCode: string): string {
  return JSON.stringify({ message, errorCode, requestId: `test-${crypto.randomUUID().slice(0, 8)}` });
}
