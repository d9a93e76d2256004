/**
 * The dashboard as a shop operator uses it: Debian's Chromium (driven by playwright-core, no browser
 * download) against the real service started as a child process on the embedded store. The journey signs
 * up, verifies the e-mail through the outbox link, creates a publishable key, loads the demo data, waits
 * for the training, asks the playground, uploads a CSV, exports and erases an end user and logs out.
 * Every page is photographed at desktop and phone width into test/browser/__screenshots__/ (not committed),
 * and no page may log a console error or see a failed request.
 *
 * It runs once, in the PGlite half of `bun run test` (the child uses the embedded store either way). In CI a
 * missing Chromium fails it; elsewhere the test is skipped with the reason printed.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";
import { BUILT_IN_PLANS } from "../../src/modules/plans/catalog";
import { childEnv, type ServerProcess, startServer } from "../deploy/support/server-process";
import { makeTempDir } from "../helpers/temp-dirs";
import { dropStaleNetworkEvents } from "./support/harness";

const CHROMIUM = "/usr/bin/chromium";
const inCi = process.env.CI === "true" || process.env.CI === "1";
const onPostgresHalf = process.env.TEST_DATABASE_URL !== undefined;
const hasChromium = existsSync(CHROMIUM);
if (!hasChromium && inCi) throw new Error(`CI needs Chromium at ${CHROMIUM} (.ci/run installs it)`);
const skipReason = onPostgresHalf
  ? "the browser journey runs once, in the PGlite half of the suite"
  : hasChromium
    ? undefined
    : `Chromium is not installed at ${CHROMIUM} (apt-get install -y chromium)`;
if (skipReason !== undefined && !onPostgresHalf)
  console.warn(`skipped test/browser/dashboard.test.ts: ${skipReason}`);

const SHOTS = join(import.meta.dir, "__screenshots__");
const DESKTOP = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };
const TRAINING_TIMEOUT_MS = 240_000;

const dataDir = makeTempDir("rs-dashboard-");
const email = "owner@dashboard.example.com";
const password = "dashboard-pass-123";

let server: ServerProcess;
/** What the browser opens: `localhost`, the service's PUBLIC_BASE_URL, so its links (e-mail, checkout) work. */
let origin: string;
let firstKey = "";
let browser: Browser;
let context: BrowserContext;
let page: Page;
/** What went wrong in the browser since the last `expectCleanPage`. */
let problems: string[] = [];

const url = (path: string): string => `${origin}${path}`;

/** Asserts the page logged no console error and no request failed, then photographs it at both widths. */
async function checkPage(name: string): Promise<void> {
  await page.waitForLoadState("networkidle");
  expect({ page: name, problems }).toEqual({ page: name, problems: [] });
  problems = [];
  for (const [width, size] of [
    ["desktop", DESKTOP],
    ["phone", PHONE],
  ] as const) {
    await page.setViewportSize(size);
    await page.screenshot({ path: join(SHOTS, `${name}.${width}.png`), fullPage: true });
  }
  await page.setViewportSize(DESKTOP);
}

async function go(label: string): Promise<void> {
  await page.getByRole("navigation", { name: "Dashboard" }).getByRole("link", { name: label }).click();
  await page.getByRole("heading", { level: 1 }).first().waitFor();
}

async function openEndUsers(): Promise<void> {
  await page.getByRole("navigation", { name: "Data" }).getByRole("link", { name: "End users" }).click();
  await page.getByRole("columnheader", { name: "Favourite categories" }).waitFor();
}

function verificationLink(): string {
  const dir = join(dataDir, "outbox");
  for (const file of readdirSync(dir).filter((name) => name.endsWith(".eml"))) {
    // Quoted-printable soft line breaks and "=3D" are undone before the link is read.
    const text = readFileSync(join(dir, file), "utf8")
      .replace(/=\r?\n/g, "")
      .replace(/=3D/g, "=");
    const match = /https?:\/\/\S+\/api\/v1\/auth\/verify-email\?token=[A-Za-z0-9_.-]+/.exec(text);
    if (text.includes(email) && match !== null) return match[0];
  }
  throw new Error("no verification mail in the outbox");
}

beforeAll(async () => {
  if (skipReason !== undefined) return;
  rmSync(SHOTS, { recursive: true, force: true });
  mkdirSync(SHOTS, { recursive: true });
  // The built-in plans, but FREE's 60 requests a minute raised: the scripted operator clicks through the
  // pages many times faster than a person, and the dashboard's calls count against that allowance.
  const plans = structuredClone(BUILT_IN_PLANS);
  plans.FREE!.limits.requestsPerMinute = 1000;
  const plansFile = join(dataDir, "plans.json");
  writeFileSync(plansFile, JSON.stringify(plans));
  // A free port chosen now, so that PUBLIC_BASE_URL (the links in e-mails and checkout pages) can name it.
  const probe = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() });
  const port = probe.port;
  probe.stop(true);
  origin = `http://localhost:${port}`;
  server = await startServer({
    env: childEnv({
      PORT: String(port),
      HOST: "127.0.0.1",
      DATA_DIR: dataDir,
      PLANS_FILE: plansFile,
      PUBLIC_BASE_URL: origin,
      // The built-in test provider: its checkout page is on this service and confirming it sends the webhook.
      PAYMENT_PROVIDER: "local",
    }),
  });
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    // Root in a container has no user namespaces for Chromium's sandbox.
    args: ["--no-sandbox", "--disable-dev-shm-usage"],
  });
  dropStaleNetworkEvents(browser);
  context = await browser.newContext({ viewport: DESKTOP, acceptDownloads: true });
  await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin });
  page = await context.newPage();
  page.on("console", (message) => {
    if (message.type() === "error") problems.push(`console: ${message.text()}`);
  });
  page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
  page.on("requestfailed", (request) => {
    // Downloads made from blob: URLs and navigations cut short by the next one are not failures.
    if (request.failure()?.errorText === "net::ERR_ABORTED") return;
    problems.push(`request failed: ${request.method()} ${request.url()} ${request.failure()?.errorText}`);
  });
  page.on("response", (response) => {
    if (response.status() >= 400)
      problems.push(`HTTP ${response.status()}: ${response.request().method()} ${response.url()}`);
  });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

describe.skipIf(skipReason !== undefined)("the dashboard in Chromium", () => {
  test("a browser asking for / lands on the log-in page; sign-up opens the home page", async () => {
    await page.goto(url("/"));
    await page.getByRole("heading", { name: "Log in" }).waitFor();
    expect(new URL(page.url()).pathname).toBe("/dashboard/login");
    await checkPage("login");

    await page.getByRole("link", { name: "Create an account" }).click();
    await page.getByLabel("Shop or company name").fill("Dashboard Shop");
    await page.getByLabel("E-mail").fill(email);
    await page.getByLabel(/^Password/).fill(password);
    await checkPage("signup");
    await page.getByRole("button", { name: "Sign up" }).click();
    await page.getByRole("heading", { name: "Welcome, Dashboard Shop" }).waitFor();
    await expect(
      page.getByRole("status").filter({ hasText: "verify your e-mail" }).textContent(),
    ).resolves.toContain("7 days left");
    // The secret key sign-up answers with is shown once.
    firstKey = (await page.getByTestId("first-key").textContent())?.trim() ?? "";
    expect(firstKey).toMatch(/^sk_live_[A-Za-z0-9]{32,}$/);
    await checkPage("home");
    await page.getByRole("button", { name: "I have saved it" }).click();
    expect(await page.getByTestId("first-key").count()).toBe(0);
  }, 60_000);

  test("the outbox link verifies the e-mail and the banner goes away", async () => {
    const link = verificationLink();
    expect(link.startsWith(`${origin}/api/v1/auth/verify-email?token=`)).toBe(true);
    const answer = await page.goto(link);
    expect(answer?.status()).toBe(200);
    await page.getByRole("heading", { name: "E-mail address verified" }).waitFor();
    await page.goto(url("/dashboard"));
    await page.getByRole("heading", { name: "Welcome, Dashboard Shop" }).waitFor();
    expect(await page.getByText("Please verify your e-mail address").count()).toBe(0);
    problems = [];
  }, 30_000);

  test("creates a publishable key, shown once with a copy button", async () => {
    await go("API keys");
    await page.getByLabel("Name").fill("Shop front");
    await page.getByLabel("publishable").check();
    await page.getByLabel(/Allowed domains/).fill("shop.example.com, *.shop.example.com");
    await page.getByRole("button", { name: "Create the key" }).click();
    const key = (await page.getByTestId("new-key").textContent())?.trim() ?? "";
    expect(key).toMatch(/^pk_live_[A-Za-z0-9]{32,}$/);
    await page.getByRole("button", { name: "Copy the key" }).click();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(key);
    const row = page.getByRole("row").filter({ hasText: "Shop front" });
    await expect(row.textContent()).resolves.toContain("shop.example.com");
    await expect(row.textContent()).resolves.toContain(key.slice(-4));
    await checkPage("keys");
  }, 30_000);

  test(
    "quick-start loads the demo data and the Training page follows the job to completion",
    async () => {
      await go("Usage and plan");
      await page.getByRole("button", { name: "Load demo data and train" }).click();
      await expect(page.getByTestId("sandbox-message").textContent()).resolves.toMatch(
        /Training job \d+ started/,
      );
      // Quick-start names demo end users; the message links to the Playground as the first of them.
      await page.getByRole("link", { name: /^Try the Playground as demo-u-\d+$/ }).waitFor();
      await checkPage("usage");

      await go("Training");
      await page.getByTestId("training-job").first().waitFor();
      await page
        .locator('[data-testid="training-job"][data-status="completed"]')
        .first()
        .waitFor({ timeout: TRAINING_TIMEOUT_MS });
      // The model history is read again once the job has finished: its charts and published flag appear.
      await page.locator(".chart canvas").nth(1).waitFor();
      await page.getByRole("cell", { name: "published", exact: true }).first().waitFor();
      await checkPage("training");

      await go("Home");
      await page.getByRole("heading", { name: "Current model" }).waitFor();
      await page.getByText("NDCG@10 of the popularity baseline").waitFor();
      // The checklist keeps what each page stored: the key created earlier and the training just done.
      await expect(page.getByLabel("Train a first model").isChecked()).resolves.toBe(true);
      await expect(page.getByLabel("Create an API key for your shop").isChecked()).resolves.toBe(true);
      await checkPage("home-trained");
    },
    TRAINING_TIMEOUT_MS + 30_000,
  );

  test("the Playground shows a demo user's recommendations with explanations and the request", async () => {
    await go("Data");
    await openEndUsers();
    const firstUser = page.getByRole("table").getByRole("link").first();
    const userId = (await firstUser.textContent())?.trim() ?? "";
    expect(userId).toMatch(/^demo-u-\d+$/);
    await checkPage("data-end-users");

    await go("Playground");
    await page.getByLabel(/^End user/).fill(userId);
    await page.getByRole("button", { name: "Get recommendations" }).click();
    const cards = page.getByTestId("recommendations").getByRole("listitem");
    await cards.first().waitFor();
    expect(await cards.count()).toBe(8);
    expect(await page.getByTestId("explanation").count()).toBeGreaterThan(0);
    const curl = (await page.locator("pre code").first().textContent()) ?? "";
    expect(curl).toContain("/api/v1/recommendations/personalized/query");
    expect(curl).toContain(userId);
    await checkPage("playground");
  }, 60_000);

  test("Online results count the playground's answer as impressions of its endpoint", async () => {
    await go("Online results");
    const row = page.getByRole("row").filter({ hasText: "personalized" });
    // Answers are logged in the background (flushed every second): the page is read again until it shows.
    for (let attempt = 0; attempt < 15; attempt++) {
      await page.getByRole("heading", { name: "By endpoint" }).waitFor();
      await page.waitForLoadState("networkidle");
      if ((await row.count()) > 0) break;
      await Bun.sleep(1000);
      await page.reload();
    }
    expect(await row.first().textContent()).toMatch(/personalized\D*[1-9]/);
    await checkPage("results");
  }, 30_000);

  test("Online results list an experiment with each arm against the control, its verdict, and stop it", async () => {
    // Started through the API as a shop's back end would, then served to a few demo users.
    const login = await fetch(url("/api/v1/auth/token"), {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email, password }),
    });
    const { accessToken } = (await login.json()) as { accessToken: string };
    const headers = { "content-type": "application/json", authorization: `Bearer ${accessToken}` };
    const created = await fetch(url("/api/v1/experiments/"), {
      method: "POST",
      headers,
      body: JSON.stringify({
        name: "Popularity against hybrid",
        endpoint: "personalized/query",
        variants: [
          { name: "A", traffic: 0.5 },
          { name: "B", traffic: 0.5, overrides: { strategy: "popularity" } },
        ],
      }),
    });
    expect(created.status).toBe(201);
    for (let n = 0; n < 10; n++) {
      const served = await fetch(url("/api/v1/recommendations/personalized/query"), {
        method: "POST",
        headers,
        body: JSON.stringify({ external_user_id: `demo-u-${n}`, limit: 5 }),
      });
      expect(served.status).toBe(200);
    }

    await go("Home");
    await go("Online results");
    const experiment = page.getByTestId("experiment").filter({ hasText: "Popularity against hybrid" });
    const arms = experiment.getByTestId("experiment-arm");
    // The answers reach the aggregates in the background: the page is read again until they show.
    for (let attempt = 0; attempt < 15; attempt++) {
      await arms.first().waitFor();
      await page.waitForLoadState("networkidle");
      if ((await arms.filter({ hasText: /^A \(control\)50\.00%as usual[1-9]/ }).count()) > 0) break;
      await Bun.sleep(1000);
      await page.reload();
    }
    expect(await arms.count()).toBe(2);
    expect(await arms.nth(0).textContent()).toMatch(/^A \(control\)50\.00%as usual[1-9]/);
    const treatment = (await arms.nth(1).textContent()) ?? "";
    expect(treatment).toContain("strategy popularity");
    // The difference from the control with its interval, the arm's verdict and what is still needed.
    expect(treatment).toMatch(/[+−]\d+\.\d\d% \([+−]\d+\.\d\d% to [+−]\d+\.\d\d%\)/);
    expect(treatment).toMatch(/keep running|is better|no difference detectable/);
    await expect(experiment.getByTestId("experiment-verdict").textContent()).resolves.toMatch(
      /Verdict on click-through rate: (keep running|.+ is better|no difference detectable) · sample size still needed: /,
    );
    await checkPage("results-experiment");

    await experiment.getByRole("button", { name: "Stop experiment" }).click();
    await page.getByRole("dialog").getByRole("button", { name: "Stop experiment" }).click();
    await page.locator('[data-testid="experiment"][data-status="stopped"]').waitFor();
    await expect(experiment.getByRole("button", { name: "Stop experiment" }).count()).resolves.toBe(0);
    // The results stay readable after the stop.
    expect(await arms.count()).toBe(2);
    const stored = await fetch(url("/api/v1/experiments/"), { headers });
    const { items } = (await stored.json()) as { items: { status: string }[] };
    expect(items[0]?.status).toBe("stopped");
    await checkPage("results-experiment-stopped");
  }, 60_000);

  test("browsing products opens a product page with similar products", async () => {
    await go("Data");
    await page.getByRole("table").getByRole("link").first().click();
    await page.getByRole("heading", { name: "Similar products" }).waitFor();
    await page.locator(".cards li").first().waitFor();
    await checkPage("data-product");
    await page.getByRole("navigation", { name: "Data" }).getByRole("link", { name: "Products" }).click();
    await page.getByRole("table").waitFor();
    await checkPage("data-products");
  }, 30_000);

  test("a CSV upload goes in as a bulk batch; its job completes and its record errors are listed", async () => {
    await go("Data");
    await page.getByRole("link", { name: "Upload a file" }).click();
    const csv = [
      "externalId,name,price,category,brand,inStock",
      "csv-1,Enamel teapot,24.5,kitchen/tea,Acme,true",
      'csv-2,"Mug, large",9,kitchen/tea,Acme,true',
      "csv-3,Broken price,-1,kitchen/tea,Acme,false",
    ].join("\n");
    await page.getByLabel("What the file holds").selectOption("products");
    await page
      .getByLabel("File", { exact: true })
      .setInputFiles({ name: "products.csv", mimeType: "text/csv", buffer: Buffer.from(csv) });
    await page.getByRole("button", { name: "Upload" }).click();
    const done = page.getByTestId("upload-done");
    await done.waitFor({ timeout: 60_000 });
    expect(await done.textContent()).toMatch(/job \d+ completed with errors/);
    expect(await page.getByRole("progressbar").getAttribute("value")).toBe("3");
    const errorRow = page.getByRole("row").filter({ hasText: "csv-3" });
    expect(await errorRow.count()).toBe(1);
    await checkPage("data-upload");

    // The accepted records are in the catalogue.
    await page.goto(url("/dashboard/data/products/csv-2"));
    await page.getByRole("heading", { name: "Mug, large" }).waitFor();
    await page.waitForLoadState("networkidle");
    expect(problems).toEqual([]);
  }, 90_000);

  test("an end user is exported (JSON download) and then erased after a typed confirmation", async () => {
    await go("Data");
    await openEndUsers();
    const link = page.getByRole("table").getByRole("link").first();
    const userId = (await link.textContent())?.trim() ?? "";
    await link.click();
    await page.getByRole("heading", { name: /^History/ }).waitFor();
    await checkPage("data-end-user");

    const [download] = await Promise.all([
      page.waitForEvent("download"),
      page.getByRole("button", { name: "Export (JSON)" }).click(),
    ]);
    const exported = JSON.parse(readFileSync((await download.path()) as string, "utf8")) as {
      endUser: { externalId: string };
      interactions: unknown[];
    };
    expect(exported.endUser.externalId).toBe(userId);
    expect(exported.interactions.length).toBeGreaterThan(0);

    await page.getByRole("button", { name: "Erase this end user" }).click();
    const dialog = page.getByRole("dialog");
    const confirm = dialog.getByRole("button", { name: "Erase for good" });
    expect(await confirm.isDisabled()).toBe(true);
    await dialog.getByLabel(/Type .* to confirm/).fill(userId);
    await confirm.click();
    await expect(page.getByRole("status").filter({ hasText: "was erased" }).textContent()).resolves.toContain(
      userId,
    );
    problems = [];
    const gone = await fetch(url(`/api/v1/end-users/external/${encodeURIComponent(userId)}`), {
      headers: {
        authorization: `Bearer ${await page.evaluate(() => sessionStorage.getItem("rs-dashboard-token"))}`,
      },
    });
    expect(gone.status).toBe(404);
  }, 60_000);

  test("API errors are shown as the service's sentence with the request id", async () => {
    await page.goto(url("/dashboard/data/end-users/no-such-user"));
    const alert = page.getByRole("alert");
    await alert.waitFor();
    expect(await alert.textContent()).toMatch(/not found.*Request id: \S+/i);
    // The one failure on this page is the 404 being shown.
    expect(problems.filter((problem) => !problem.includes("404"))).toEqual([]);
    problems = [];
  }, 30_000);

  test("keyboard: the skip link and the navigation are reachable with Tab and show a focus ring", async () => {
    await page.goto(url("/dashboard"));
    await page.getByRole("heading", { name: "Welcome, Dashboard Shop" }).waitFor();
    await page.keyboard.press("Tab");
    const focused = page.locator(":focus");
    expect(await focused.textContent()).toBe("Skip to content");
    await page.keyboard.press("Tab");
    expect(await focused.textContent()).toBe("Home");
    const outline = await focused.evaluate((element) => getComputedStyle(element).outlineStyle);
    expect(outline).not.toBe("none");
  }, 30_000);

  test("subscribing through the billing routes: the provider's checkout, then back on the new plan", async () => {
    await go("Usage and plan");
    await page.getByLabel("Secret API key for billing").fill(firstKey);
    await page.getByRole("button", { name: "Subscribe to STARTER" }).click();
    await page.getByRole("heading", { name: "Confirm your subscription" }).waitFor();
    expect(page.url()).toContain("/api/v1/billing/local/checkout/");
    await page.getByRole("button", { name: "Confirm subscription" }).click();
    await page.getByRole("heading", { name: "Usage and plan" }).waitFor();
    await page.getByRole("article", { name: "Plan STARTER" }).getByText("your plan").waitFor();
    // Sandbox tools are for FREE accounts only.
    expect(await page.getByRole("heading", { name: "Sandbox" }).count()).toBe(0);
    // The provider's own pages are not the dashboard's: only what the dashboard logged since counts.
    problems = problems.filter(
      (problem) => !problem.includes("/favicon.ico") && !problem.includes("404 (Not Found)"),
    );
    await checkPage("usage-starter");
  }, 60_000);

  test("logging out returns to the log-in page and revokes the session", async () => {
    const token = await page.evaluate(() => sessionStorage.getItem("rs-dashboard-token"));
    await page.waitForLoadState("networkidle");
    const [logout] = await Promise.all([
      page.waitForResponse((response) => response.url().endsWith("/api/v1/auth/logout")),
      page.getByRole("button", { name: "Log out" }).click(),
    ]);
    expect(logout.status()).toBe(200);
    await page.getByRole("heading", { name: "Log in" }).waitFor();
    expect(await page.evaluate(() => sessionStorage.getItem("rs-dashboard-token"))).toBeNull();
    const after = await fetch(url("/api/v1/system-users/me"), {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(after.status).toBe(401);
    expect(problems).toEqual([]);
  }, 30_000);
});
