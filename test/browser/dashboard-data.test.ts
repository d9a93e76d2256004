/**
 * The dashboard's Data pages in Debian's Chromium against the service as a child process (on the suite's
 * store, so on Postgres too when TEST_DATABASE_URL is set): records whose ids need escaping in an address,
 * and a long history.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import type { Browser } from "playwright-core";
import { ingest, openDashboard, signUp } from "./support/dashboard";
import { browserSkipReason, launchChromium, type Service, startService } from "./support/harness";

const skipReason = browserSkipReason();
if (skipReason !== undefined) console.warn(`browser tests skipped: ${skipReason}`);

let service: Service;
let browser: Browser;

beforeAll(async () => {
  if (skipReason !== undefined) return;
  service = await startService();
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await service?.server.stop();
});

const product = (externalId: string, name: string, price = 10) => ({
  externalId,
  name,
  price,
  category: "kitchen",
});

describe.skipIf(skipReason !== undefined)("the Data pages in Chromium", () => {
  test("a product and an end user whose ids hold '/', '?', '%', a space and 'é' open, export and erase", async () => {
    const owner = await signUp(service);
    const productId = "sku/42";
    const userId = "a b/é?%41";
    await ingest(service, owner, {
      products: [product(productId, "Slash kettle")],
      users: [{ externalId: userId }],
      interactions: [{ external_user_id: userId, external_product_id: productId, interaction_type: "view" }],
    });
    const { page, errorAnswers, close } = await openDashboard(browser, service, "/data", owner.token);
    try {
      await page.getByRole("link", { name: "Slash kettle" }).click();
      await page.getByRole("heading", { name: "Slash kettle" }).waitFor();
      await page.getByRole("heading", { name: "Similar products" }).waitFor();
      expect(await page.getByRole("definition").first().textContent()).toBe(productId);
      const tabs = page.getByRole("navigation", { name: "Data" });

      await tabs.getByRole("link", { name: "End users" }).click();
      await page.getByRole("link", { name: userId }).click();
      await page.getByRole("heading", { name: `End user ${userId}` }).waitFor();
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
      const gone = await service.call("GET", `/api/v1/end-users/external/${encodeURIComponent(userId)}`, {
        apiKey: owner.secretKey,
      });
      expect(gone.status).toBe(404);
      expect(errorAnswers).toEqual([]);
    } finally {
      await close();
    }
  }, 60_000);

  test("an end user's history shows the newest 200 interactions, newest first, and counts the older ones", async () => {
    const owner = await signUp(service);
    const start = Date.now() - 300 * 86_400_000;
    // Value n on day n: the value column tells the rows apart, 250 being the newest.
    const interactions = Array.from({ length: 250 }, (_, n) => ({
      external_user_id: "heavy",
      external_product_id: "p-1",
      interaction_type: "view",
      value: n + 1,
      timestamp: new Date(start + n * 86_400_000).toISOString(),
    }));
    await ingest(service, owner, { products: [product("p-1", "Teapot")], users: [{ externalId: "heavy" }] });
    await ingest(service, owner, { interactions });
    const { page, close } = await openDashboard(browser, service, "/data/end-users/heavy", owner.token);
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
});
