/**
 * What the browser tests share: Debian's Chromium driven by playwright-core (never a downloaded browser),
 * the service as a real child process on a free port, a trained tenant, and a shop: a second HTTPS server
 * on another free port that Chromium reaches under two names (shop.test, allowed by the publishable key,
 * and evil.test, not allowed), both mapped to 127.0.0.1 by the browser's host resolver.
 */

import { afterAll, beforeAll } from "bun:test";
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Server } from "bun";
import { type Browser, chromium } from "playwright-core";
import { type Service, startService } from "../../helpers/live-service";
import { makeTempDir } from "../../helpers/temp-dirs";

export { type Service, startService };

export const CHROMIUM = "/usr/bin/chromium";
export const SHOP_HOST = "shop.test";
export const FOREIGN_HOST = "evil.test";
export const SCREENSHOTS = join(import.meta.dir, "..", "__screenshots__");

/**
 * Why the browser tests cannot run here, or undefined when they can. Only a machine without Chromium may
 * skip, and never CI: there the tests must run (.ci/run installs chromium).
 */
export function browserSkipReason(): string | undefined {
  if (existsSync(CHROMIUM)) return undefined;
  const reason = `${CHROMIUM} is missing (apt-get install -y chromium)`;
  if (process.env.CI) throw new Error(`browser tests must run in CI, but ${reason}`);
  return reason;
}

/** A network event's request or response object that playwright-core's client no longer holds. */
const STALE_NETWORK_OBJECT =
  /^Object with guid (request|response)@[0-9a-f]+ was not bound in the connection$/;

/**
 * playwright-core's client now and then receives a network event (a response, a failed or finished
 * request) naming a request or response object it no longer holds. It throws while decoding the event,
 * outside any call the test made, and bun:test then fails whichever test is running (1 run in 3 of the
 * dashboard journey on a busy 2-core machine). Such events only feed what the tests observe (their lists of
 * failed requests and error answers), so they are dropped, and each drop is reported on stderr.
 */
export function dropStaleNetworkEvents(browser: Browser): void {
  const connection = (browser as unknown as { _connection: { dispatch(message: unknown): void } })
    ._connection;
  const dispatch = connection.dispatch.bind(connection);
  connection.dispatch = (message: unknown) => {
    try {
      dispatch(message);
    } catch (error) {
      const { method } = message as { method?: string };
      if (!(error instanceof Error) || !STALE_NETWORK_OBJECT.test(error.message) || method === undefined)
        throw error;
      console.warn(`playwright: dropped a "${method}" event: ${error.message}`);
    }
  };
}

/** The service and Chromium one test file drives, started before its tests and stopped after them. */
export interface BrowserSuite {
  /** Why the file's tests are skipped here (see `browserSkipReason`); nothing is started then. */
  readonly skipReason: string | undefined;
  readonly service: Service;
  readonly browser: Browser;
}

export function browserSuite(settings: Record<string, string> = {}): BrowserSuite {
  // The pages are tested once, on the embedded store. On the suite's shared Postgres database the job runner of
  // the test process itself (its own plan table) would claim the service's ingestion jobs.
  const onPostgresHalf = process.env.TEST_DATABASE_URL !== undefined;
  const skipReason = onPostgresHalf
    ? "the pages are tested in the PGlite half of the suite"
    : browserSkipReason();
  if (skipReason !== undefined && !onPostgresHalf) console.warn(`browser tests skipped: ${skipReason}`);
  let service: Service | undefined;
  let browser: Browser | undefined;
  beforeAll(async () => {
    if (skipReason !== undefined) return;
    service = await startService(settings);
    browser = await launchChromium();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await service?.server.stop();
  });
  const started = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error("the browser suite has not started");
    return value;
  };
  return {
    skipReason,
    get service() {
      return started(service);
    },
    get browser() {
      return started(browser);
    },
  };
}

export async function launchChromium(): Promise<Browser> {
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      `--host-resolver-rules=MAP ${SHOP_HOST} 127.0.0.1, MAP ${FOREIGN_HOST} 127.0.0.1`,
      // The shop's certificate is self-signed for this run.
      "--ignore-certificate-errors",
      "--no-sandbox",
      "--disable-dev-shm-usage",
    ],
  });
  dropStaleNetworkEvents(browser);
  return browser;
}

export interface TrainedTenant {
  token: string;
  secretKey: string;
  /** Publishable key allowed from SHOP_HOST only. */
  publishableKey: string;
  /** A demo end user with a history, so the homepage answer is personalised. */
  user: string;
}

/** Signs up, loads the sandbox's demo catalogue, waits for its training, and makes a publishable key. */
export async function trainedTenant(service: Service, timeoutMs = 180_000): Promise<TrainedTenant> {
  const email = `browser-${crypto.randomUUID()}@example.com`;
  const registered = await service.call("POST", "/api/v1/auth/register", {
    body: { accountName: "Browser shop", email, password: "browser-pass-123" },
  });
  if (registered.status !== 200) throw new Error(`register: ${registered.status}`);
  const { accessToken: token, apiKey: secretKey } = registered.body;
  const started = await service.call("POST", "/api/v1/sandbox/quick-start", { apiKey: secretKey });
  if (started.status !== 200)
    throw new Error(`quick-start: ${started.status} ${JSON.stringify(started.body)}`);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const job = await service.call("GET", `/api/v1/pipeline/jobs/${started.body.jobId}/status`, {
      apiKey: secretKey,
    });
    if (job.body.status === "completed") break;
    if (job.body.status === "failed" || Date.now() > deadline) {
      throw new Error(`training did not complete: ${JSON.stringify(job.body)}`);
    }
    await Bun.sleep(500);
  }
  const key = await service.call("POST", "/api/v1/api-keys/", {
    token,
    body: { name: "shop widget", kind: "publishable", allowedDomains: [SHOP_HOST] },
  });
  if (key.status !== 201) throw new Error(`publishable key: ${key.status} ${JSON.stringify(key.body)}`);
  // The demo end user with the most interactions (some accounts' first demo user has none).
  const user: string = started.body.sampleEndUsers[0];
  return { token, secretKey, publishableKey: key.body.api_key, user };
}

/**
 * Gives products the shop's own image and page (attributes `image_url` and `url`), as a shop's catalogue
 * would have them: the widget takes both from there.
 */
export async function giveShopPages(service: Service, tenant: TrainedTenant, shopOrigin: string) {
  const listed = await service.call("GET", "/api/v1/products/?limit=1000", { apiKey: tenant.secretKey });
  for (const product of listed.body.items as Record<string, unknown>[]) {
    const id = String(product.externalId);
    const { externalId: _id, createdAt: _c, updatedAt: _u, ...fields } = product;
    const body = {
      ...fields,
      attributes: {
        ...(product.attributes as object),
        image_url: `${shopOrigin}/img/${encodeURIComponent(id)}.svg`,
        url: `${shopOrigin}/product/${encodeURIComponent(id)}`,
      },
    };
    const put = await service.call("PUT", `/api/v1/products/external/${encodeURIComponent(id)}`, {
      apiKey: tenant.secretKey,
      body,
    });
    if (put.status !== 200) throw new Error(`update ${id}: ${put.status} ${JSON.stringify(put.body)}`);
  }
}

export interface Shop {
  server: Server<undefined>;
  port: number;
  /** https://shop.test:PORT: the origin the publishable key allows. */
  origin: string;
  /** https://evil.test:PORT: the same pages on an origin the key does not allow. */
  foreignOrigin: string;
  stop(): void;
}

/** A shop's web server: HTML pages given per path, product pages and images for every product. */
export function startShop(
  pages: Record<string, string | (() => string)>,
  assets: Record<string, string> = {},
): Shop {
  const dir = makeTempDir("rs-shop-tls-");
  const cert = join(dir, "cert.pem");
  const key = join(dir, "key.pem");
  const made = Bun.spawnSync([
    "openssl",
    "req",
    "-x509",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-keyout",
    key,
    "-out",
    cert,
    "-days",
    "1",
    "-subj",
    `/CN=${SHOP_HOST}`,
  ]);
  if (made.exitCode !== 0) throw new Error(`openssl failed: ${made.stderr.toString()}`);
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    tls: { cert: Bun.file(cert), key: Bun.file(key) },
    fetch(request) {
      const path = new URL(request.url).pathname;
      const page = pages[path];
      if (page !== undefined) {
        return new Response(typeof page === "string" ? page : page(), {
          headers: { "content-type": "text/html; charset=utf-8" },
        });
      }
      const asset = assets[path];
      if (asset !== undefined) {
        return new Response(Bun.file(asset), {
          headers: { "content-type": "text/javascript; charset=utf-8" },
        });
      }
      if (path === "/favicon.ico") return new Response(null, { status: 204 });
      if (path.startsWith("/img/")) {
        const hue = [...path].reduce((sum, c) => sum + c.charCodeAt(0), 0) % 360;
        return new Response(
          `<svg xmlns="http://www.w3.org/2000/svg" width="200" height="200"><rect width="200" height="200" fill="hsl(${hue},60%,70%)"/></svg>`,
          { headers: { "content-type": "image/svg+xml" } },
        );
      }
      if (path.startsWith("/product/")) {
        const id = decodeURIComponent(path.slice("/product/".length));
        return new Response(`<!doctype html><title>${id}</title><h1 id="product">${id}</h1>`, {
          headers: { "content-type": "text/html; charset=utf-8" },
        });
      }
      return new Response("not found", { status: 404 });
    },
  });
  const port = server.port as number;
  return {
    server,
    port,
    origin: `https://${SHOP_HOST}:${port}`,
    foreignOrigin: `https://${FOREIGN_HOST}:${port}`,
    stop: () => server.stop(true),
  };
}

export function screenshotPath(name: string): string {
  mkdirSync(SCREENSHOTS, { recursive: true });
  return join(SCREENSHOTS, `${name}.png`);
}
