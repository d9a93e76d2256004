/**
 * The dashboard's Data pages in Debian's Chromium against the service as a child process (on the suite's
 * store, so on Postgres too when TEST_DATABASE_URL is set): records whose ids need escaping in an address,
 * a long history, and an upload that meets the bulk-ingestion limit.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { errorBody, ingest, openDashboard, signUp } from "./support/dashboard";
import { browserSuite } from "./support/harness";

const suite = browserSuite();
const { skipReason } = suite;

const product = (externalId: string, name: string, price = 10) => ({
  externalId,
  name,
  price,
  category: "kitchen",
});

describe.skipIf(skipReason !== undefined)("the Data pages in Chromium", () => {
  test("a product and an end user whose ids hold '/', '?', '%', a space and 'é' open, export and erase", async () => {
    const owner = await signUp(suite.service);
    const productId = "sku/42";
    const userId = "a b/é?%41";
    await ingest(suite.service, owner, {
      products: [product(productId, "Slash kettle")],
      users: [{ externalId: userId }],
      interactions: [{ external_user_id: userId, external_product_id: productId, interaction_type: "view" }],
    });
    const { page, errorAnswers, close } = await openDashboard(
      suite.browser,
      suite.service,
      "/data",
      owner.token,
    );
    try {
      await page.getByRole("link", { name: "Slash kettle" }).click();
      await page.getByRole("heading", { name: "Slash kettle" }).waitFor();
      await page.getByRole("heading", { name: "Similar products" }).waitFor();
      expect(await page.getByRole("definition").first().textContent()).toBe(productId);
      // A record's page belongs to its list's tab.
      const tabs = page.getByRole("navigation", { name: "Data" });
      expect(await tabs.getByRole("link", { name: "Products" }).getAttribute("aria-current")).toBe("page");

      await tabs.getByRole("link", { name: "End users" }).click();
      await page.getByRole("link", { name: userId }).click();
      await page.getByRole("heading", { name: `End user ${userId}` }).waitFor();
      expect(await tabs.getByRole("link", { name: "End users" }).getAttribute("aria-current")).toBe("page");
      expect(await page.getByRole("cell", { name: productId }).count()).toBe(1);

      const [download] = await Promise.all([
        page.waitForEvent("download"),
        page.getByRole("button", { name: "Export (JSON)" }).click(),
      ]);
      const exported = JSON.parse(readFileSync((await download.path()) as string, "utf8"));
      expect(exported.endUser.externalId).toBe(userId);
      expect(exported.interactions).toHaveLength(1);

      await page.getByRole("button", { name: "Erase this end user" }).click();
      const dialog = page.getByRole("dialog");
      await dialog.getByLabel(/Type .* to confirm/).fill(userId);
      await dialog.getByRole("button", { name: "Erase for good" }).click();
      await page
        .getByRole("status")
        .filter({ hasText: `${userId} was erased: 1 interactions` })
        .waitFor();
      const gone = await suite.service.call(
        "GET",
        `/api/v1/end-users/external/${encodeURIComponent(userId)}`,
        {
          apiKey: owner.secretKey,
        },
      );
      expect(gone.status).toBe(404);
      expect(errorAnswers).toEqual([]);
    } finally {
      await close();
    }
  }, 60_000);

  test("an end user's history shows the newest 200 interactions, newest first, and counts the older ones", async () => {
    const owner = await signUp(suite.service);
    const start = Date.now() - 300 * 86_400_000;
    // Value n on day n: the value column tells the rows apart, 250 being the newest.
    const interactions = Array.from({ length: 250 }, (_, n) => ({
      external_user_id: "heavy",
      external_product_id: "p-1",
      interaction_type: "view",
      value: n + 1,
      timestamp: new Date(start + n * 86_400_000).toISOString(),
    }));
    await ingest(suite.service, owner, {
      products: [product("p-1", "Teapot")],
      users: [{ externalId: "heavy" }],
    });
    await ingest(suite.service, owner, { interactions });
    const { page, close } = await openDashboard(
      suite.browser,
      suite.service,
      "/data/end-users/heavy",
      owner.token,
    );
    try {
      const history = page.getByRole("region", { name: /^History/ });
      await history.getByRole("table").waitFor();
      expect(await history.getByRole("heading").textContent()).toBe("History (250 interactions)");
      const rows = history.getByRole("row");
      expect(await rows.count()).toBe(201);
      const valueAt = async (at: number) =>
        (await rows.nth(at).getByRole("cell").nth(3).textContent())?.trim();
      expect(await valueAt(1)).toBe("250");
      expect(await valueAt(200)).toBe("51");
      expect(await page.getByTestId("history-hidden").textContent()).toContain(
        "50 older ones are in the export",
      );
    } finally {
      await close();
    }
  }, 60_000);

  test("an upload meeting the bulk limit waits out Retry-After and goes on from the refused batch", async () => {
    const owner = await signUp(suite.service);
    const lines = ["externalId,name,price,category"];
    for (let n = 0; n < 2500; n++) lines.push(`bulk-${n},Product ${n},${n + 1},kitchen`);
    // Refused by the service: one without an id (in the second batch), one with a price of 0.
    lines[1502] = ",No id,5,kitchen";
    lines[2400] = "bulk-2399,Free,0,kitchen";
    const csv = lines.join("\n");

    const { page, close } = await openDashboard(suite.browser, suite.service, "/data/upload", owner.token);
    let posts = 0;
    try {
      await page.route("**/api/v1/ingestion/batch", async (route) => {
        if (route.request().method() !== "POST" || ++posts !== 2) return route.continue();
        // The second batch meets the bulk limit, as the eleventh of a minute would.
        await route.fulfill({
          status: 429,
          headers: { "content-type": "application/json", "retry-after": "3" },
          body: errorBody("Bulk-ingestion limit of 10 requests per minute exceeded", "RATE_LIMITED"),
        });
      });
      await page.getByLabel("What the file holds").selectOption("products");
      await page
        .getByLabel("File", { exact: true })
        .setInputFiles({ name: "big.csv", mimeType: "text/csv", buffer: Buffer.from(csv) });
      // Watched from before the upload starts: the notice shows only while the wait lasts.
      const waiting = page.getByTestId("upload-waiting").textContent({ timeout: 60_000 });
      await page.getByRole("button", { name: "Upload" }).click();
      await expect(waiting).resolves.toMatch(/^Waiting [1-3] s for the bulk-ingestion limit/);
      const done = page.getByTestId("upload-done");
      await done.waitFor({ timeout: 60_000 });
      expect(await done.textContent()).toContain("2,498 of 2,500 records applied, 2 refused");
      expect(await page.getByText(/^Progress: 2,500 of 2,500 records processed/).count()).toBe(1);
      expect(posts).toBe(4);
      // Where each refused record is in the file: the header is line 1.
      const noId = page.getByRole("row").filter({ hasText: "line 1503" });
      expect(await noId.getByRole("cell").nth(2).textContent()).toBe("—");
      expect(await page.getByRole("row").filter({ hasText: "line 2401" }).textContent()).toContain(
        "bulk-2399",
      );
    } finally {
      await close();
    }
    // Three batches reached the service, each once.
    const jobs = await suite.service.call("GET", "/api/v1/ingestion/batch?limit=10", {
      apiKey: owner.secretKey,
    });
    expect(
      jobs.body
        .map((job: { totalProducts: number }) => job.totalProducts)
        .sort((a: number, b: number) => b - a),
    ).toEqual([1000, 1000, 500]);
    const listed = await suite.service.call("GET", "/api/v1/products/?limit=1", { apiKey: owner.secretKey });
    expect(listed.body.total).toBe(2498);
  }, 90_000);

  test("an upload stopped by a long bulk-limit wait continues from the refused batch, sending none twice", async () => {
    const owner = await signUp(suite.service);
    const lines = ["externalId,name,price,category"];
    for (let n = 0; n < 1500; n++) lines.push(`later-${n},Product ${n},${n + 1},kitchen`);
    const { page, close } = await openDashboard(suite.browser, suite.service, "/data/upload", owner.token);
    let posts = 0;
    try {
      // The hourly window is spent: an hour is too long to wait on the page.
      await page.route("**/api/v1/ingestion/batch", async (route) => {
        if (route.request().method() !== "POST" || ++posts !== 2) return route.continue();
        await route.fulfill({
          status: 429,
          headers: { "content-type": "application/json", "retry-after": "3600" },
          body: errorBody("Bulk-ingestion limit of 100 requests per hour exceeded", "RATE_LIMITED"),
        });
      });
      await page
        .getByLabel("File", { exact: true })
        .setInputFiles({ name: "later.csv", mimeType: "text/csv", buffer: Buffer.from(lines.join("\n")) });
      await page.getByRole("button", { name: "Upload" }).click();
      const stopped = page.getByTestId("upload-stopped");
      await stopped.waitFor({ timeout: 30_000 });
      expect(await stopped.textContent()).toContain("1,000 of 1,500 records sent");
      expect(await page.getByRole("alert").textContent()).toContain("100 requests per hour");
      await stopped.getByRole("button", { name: "Continue the upload" }).click();
      const done = page.getByTestId("upload-done");
      await done.waitFor({ timeout: 30_000 });
      expect(await done.textContent()).toContain("1,500 of 1,500 records applied, 0 refused");
      expect(posts).toBe(3);
    } finally {
      await close();
    }
    const jobs = await suite.service.call("GET", "/api/v1/ingestion/batch?limit=10", {
      apiKey: owner.secretKey,
    });
    expect(jobs.body.map((job: { totalProducts: number }) => job.totalProducts)).toEqual([500, 1000]);
  }, 60_000);

  test("an upload whose every record is refused says none was applied", async () => {
    const owner = await signUp(suite.service);
    const csv = "externalId,name,price,category\nbad-1,Nothing,-1,kitchen\n,Nameless id,3,kitchen\n";
    const { page, close } = await openDashboard(suite.browser, suite.service, "/data/upload", owner.token);
    try {
      await page
        .getByLabel("File", { exact: true })
        .setInputFiles({ name: "bad.csv", mimeType: "text/csv", buffer: Buffer.from(csv) });
      await page.getByRole("button", { name: "Upload" }).click();
      const done = page.getByTestId("upload-done");
      await done.waitFor({ timeout: 30_000 });
      expect(await done.textContent()).toContain("0 of 2 records applied, 2 refused");
      expect(await page.getByText("Progress: 2 of 2 records processed (0 applied, 2 refused)").count()).toBe(
        1,
      );
      expect(await page.getByRole("row").filter({ hasText: "line 3" }).count()).toBe(1);
    } finally {
      await close();
    }
  }, 60_000);
});
