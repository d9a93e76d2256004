/**
 * The widget and the typed client as a shop's visitor meets them, in Debian's Chromium: the service on one port, the shop's pages
 * on another (https://shop.test:PORT, which the publishable key allows, and the same pages as
 * https://evil.test:PORT, which it does not). Screenshots go to test/browser/__screenshots__/ as artefacts;
 * the layout is checked from element boxes, not pixels.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { buildClient } from "../../clients/js/build";
import { makeTempDir } from "../helpers/temp-dirs";
import {
  browserSkipReason,
  giveShopPages,
  launchChromium,
  type Service,
  type Shop,
  screenshotPath,
  startService,
  startShop,
  type TrainedTenant,
  trainedTenant,
} from "./support/harness";

const skipReason = browserSkipReason();
if (skipReason !== undefined) console.warn(`browser tests skipped: ${skipReason}`);

let service: Service;
let shop: Shop;
let tenant: TrainedTenant;
let browser: Browser;

const homepage = () => `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Test shop</title>
  <style>body{font-family:sans-serif;margin:0 auto;max-width:72rem;padding:1rem}</style>
  <script src="${service.baseUrl}/widget.js" data-key="${tenant.publishableKey}" async></script>
</head>
<body>
  <header><h1>Test shop</h1></header>
  <main>
    <p id="intro">Welcome to the shop.</p>
    <div id="recs" data-recs="homepage" data-user="${tenant.user}" data-currency="EUR"></div>
  </main>
  <footer>Footer</footer>
</body>
</html>`;

/** Every mode of the widget on one page, as a shop's templates would place them. */
const modesPage = () => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Modes</title>
<script src="${service.baseUrl}/widget.js" data-key="${tenant.publishableKey}" async></script></head>
<body>
  <div data-recs="homepage" data-user="${tenant.user}" data-limit="5"></div>
  <div data-recs="product-page" data-user="${tenant.user}" data-product="demo-p-0001" data-title="Similar picks"></div>
  <div data-recs="cart" data-user="${tenant.user}" data-cart="demo-p-0001,demo-p-0002"></div>
  <div data-recs="checkout" data-user="${tenant.user}" data-order-value="120"></div>
  <div data-recs="personalized" data-user="${tenant.user}" data-limit="6"></div>
  <div data-recs="personalized" data-user="${tenant.user}"></div>
</body></html>`;

/** A page with the typed client as a module; the test drives it through `window.run`. */
const clientPage = () =>
  `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Client page</title>
<script type="module">
  import { RecsClient, RecsApiError, RecsNetworkError } from "/recs-client.js";
  window.run = async (apiKey, call) => {
    const client = new RecsClient({ baseUrl: ${JSON.stringify("SERVICE")}, apiKey, retry: false });
    try {
      const answer = call === "homepage"
        ? await client.recommendations.homepage(${JSON.stringify("USER")}, 4)
        : await client.request("get", "/api/v1/products/");
      return { ok: true, items: answer.items.length };
    } catch (error) {
      return {
        ok: false,
        name: error.name,
        network: error instanceof RecsNetworkError,
        api: error instanceof RecsApiError,
        status: error.status,
        errorCode: error.errorCode,
        message: error.message,
      };
    }
  };
  window.ready = true;
</script></head><body><h1>Client page</h1></body></html>`
    .replace('"SERVICE"', JSON.stringify(service.baseUrl))
    .replace('"USER"', JSON.stringify(tenant.user));

beforeAll(async () => {
  if (skipReason !== undefined) return;
  service = await startService();
  tenant = await trainedTenant(service);
  const client = await buildClient(join(makeTempDir("rs-browser-client-"), "dist"));
  shop = startShop(
    { "/": homepage, "/modes": modesPage, "/client": clientPage },
    { "/recs-client.js": client },
  );
  await giveShopPages(service, tenant, shop.origin);
  browser = await launchChromium();
}, 300_000);

afterAll(async () => {
  await browser?.close();
  shop?.stop();
  await service?.server.stop();
});

interface Watched {
  page: Page;
  warnings: string[];
  errors: string[];
  /** Every URL the page asked for, with how it ended. */
  requests: { url: string; method: string; status: number | "failed"; body: string | null }[];
}

async function openPage(url: string, viewport: { width: number; height: number }, mobile = false) {
  const context = await browser.newContext({
    viewport,
    isMobile: mobile,
    hasTouch: mobile,
    ignoreHTTPSErrors: true,
  });
  const page = await context.newPage();
  const watched: Watched = { page, warnings: [], errors: [], requests: [] };
  page.on("console", (message) => {
    if (message.type() === "warning") watched.warnings.push(message.text());
    if (message.type() === "error") watched.errors.push(message.text());
  });
  page.on("requestfinished", async (request) => {
    const response = await request.response();
    watched.requests.push({
      url: request.url(),
      method: request.method(),
      status: response?.status() ?? 0,
      body: request.postData(),
    });
  });
  page.on("requestfailed", (request) => {
    watched.requests.push({
      url: request.url(),
      method: request.method(),
      status: "failed",
      body: request.postData(),
    });
  });
  await page.goto(url);
  return watched;
}

/** The carousel's boxes: the section, the scrolling track, each card, and the page's own width. */
async function layout(page: Page) {
  return page.evaluate(() => {
    const box = (el: Element) => {
      const r = el.getBoundingClientRect();
      return { x: r.x, y: r.y, width: r.width, height: r.height };
    };
    const track = document.querySelector(".recs-track") as HTMLElement;
    return {
      viewportWidth: window.innerWidth,
      pageWidth: document.documentElement.scrollWidth,
      section: box(document.querySelector(".recs-widget")!),
      track: { ...box(track), scrollWidth: track.scrollWidth, clientWidth: track.clientWidth },
      cards: [...document.querySelectorAll(".recs-item")].map(box),
    };
  });
}

describe.skipIf(skipReason !== undefined)("the widget in Chromium", () => {
  test("shows recommended products on the shop's page: name, price, image and link, accessible, from no third party", async () => {
    const { page, warnings, errors, requests } = await openPage(`${shop.origin}/`, {
      width: 1280,
      height: 800,
    });
    await page.waitForSelector(".recs-item", { timeout: 20_000 });
    const cards = await page.$$eval(".recs-item", (items) =>
      items.map((item) => ({
        className: item.className,
        productId: (item as HTMLElement).dataset.productId,
        name: item.querySelector(".recs-name")?.textContent,
        price: item.querySelector(".recs-price")?.textContent,
        href: item.querySelector("a.recs-link")?.getAttribute("href"),
        image: item.querySelector("img.recs-image")?.getAttribute("src"),
        loaded: (item.querySelector("img.recs-image") as HTMLImageElement | null)?.complete,
      })),
    );
    expect(cards.length).toBeGreaterThanOrEqual(4);
    for (const card of cards) {
      expect(card.productId).toStartWith("demo-p-");
      expect(card.className).toBe(`recs-item recs-item--${card.productId}`);
      expect(card.name?.length).toBeGreaterThan(3);
      expect(card.price).toMatch(/€\s?[\d,]+\.\d\d|[\d,]+\.\d\d\s?€/);
      expect(card.href).toBe(`${shop.origin}/product/${card.productId}`);
      expect(card.image).toBe(`${shop.origin}/img/${card.productId}.svg`);
    }
    // Accessible: a labelled region, a focusable list, images that are decorative next to the name.
    const a11y = await page.evaluate(() => {
      const section = document.querySelector(".recs-widget")!;
      const heading = document.getElementById(section.getAttribute("aria-labelledby") ?? "");
      return {
        heading: heading?.textContent,
        listRole: document.querySelector(".recs-track")?.getAttribute("role"),
        trackFocusable: (document.querySelector(".recs-track") as HTMLElement).tabIndex === 0,
        navLabels: [...document.querySelectorAll(".recs-nav")].map((b) => b.getAttribute("aria-label")),
        altTexts: [...document.querySelectorAll(".recs-image")].map((img) => img.getAttribute("alt")),
      };
    });
    expect(a11y.heading).toBe("Recommended for you");
    expect(a11y.listRole).toBe("list");
    expect(a11y.trackFocusable).toBe(true);
    expect(a11y.navLabels).toEqual(["Previous products", "Next products"]);
    expect(new Set(a11y.altTexts)).toEqual(new Set([""]));

    // The page's own content is untouched around the widget.
    expect(await page.textContent("#intro")).toBe("Welcome to the shop.");
    const origins = new Set(requests.map((r) => new URL(r.url).origin));
    expect([...origins].sort()).toEqual([service.baseUrl, shop.origin].sort());
    expect(warnings).toEqual([]);
    expect(errors).toEqual([]);
    await page.screenshot({ path: screenshotPath("widget-desktop"), fullPage: true });
    await page.context().close();
  }, 60_000);

  test("lays the cards out in one row on a desktop and as a sideways-scrolling row on a phone, never widening the page", async () => {
    const desktop = await openPage(`${shop.origin}/`, { width: 1280, height: 800 });
    await desktop.page.waitForSelector(".recs-item");
    const wide = await layout(desktop.page);
    expect(wide.pageWidth).toBeLessThanOrEqual(wide.viewportWidth);
    expect(new Set(wide.cards.map((c) => Math.round(c.y))).size).toBe(1);
    const visible = wide.cards.filter((c) => c.x + c.width <= wide.track.x + wide.track.width + 1);
    expect(visible.length).toBeGreaterThanOrEqual(4);
    for (const card of wide.cards) {
      expect(card.width).toBeGreaterThanOrEqual(140);
      expect(card.width).toBeLessThanOrEqual(210);
      expect(card.height).toBeGreaterThan(card.width);
    }
    expect(wide.section.width).toBeLessThanOrEqual(wide.viewportWidth);
    // More cards than fit: the arrows show; a row that fits has none.
    expect(wide.track.scrollWidth > wide.track.clientWidth).toBe(
      await desktop.page.isVisible(".recs-nav--next"),
    );
    await desktop.page.context().close();

    const phone = await openPage(`${shop.origin}/`, { width: 390, height: 844 }, true);
    await phone.page.waitForSelector(".recs-item");
    const narrow = await layout(phone.page);
    expect(narrow.pageWidth).toBeLessThanOrEqual(narrow.viewportWidth);
    expect(new Set(narrow.cards.map((c) => Math.round(c.y))).size).toBe(1);
    // More cards than fit: the track scrolls inside its own box, and at least two cards show at once.
    expect(narrow.track.scrollWidth).toBeGreaterThan(narrow.track.clientWidth);
    expect(narrow.track.x + narrow.track.width).toBeLessThanOrEqual(narrow.viewportWidth + 0.5);
    expect(narrow.cards.filter((c) => c.x + c.width <= narrow.viewportWidth).length).toBeGreaterThanOrEqual(
      2,
    );
    expect(await phone.page.isVisible(".recs-nav")).toBe(false);
    await phone.page.screenshot({ path: screenshotPath("widget-phone"), fullPage: true });
    await phone.page.evaluate(() => document.querySelector(".recs-track")!.scrollBy({ left: 10_000 }));
    await phone.page.waitForFunction(() => document.querySelector(".recs-track")!.scrollLeft > 0);
    await phone.page.screenshot({ path: screenshotPath("widget-phone-scrolled") });
    await phone.page.context().close();
  }, 60_000);

  test("a click on a product opens its page at once, records a CLICK and credits it to the answer that showed it", async () => {
    const { page, requests } = await openPage(`${shop.origin}/`, { width: 1280, height: 800 });
    await page.waitForSelector(".recs-item");
    const productId = await page.$eval(".recs-item", (item) => (item as HTMLElement).dataset.productId!);
    const recommendationId = await page.$eval(
      ".recs-widget",
      (el) => (el as HTMLElement).dataset.recommendationId,
    );
    expect(recommendationId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    const before = await clicksOf(tenant.user, productId);
    await Promise.all([page.waitForURL(`${shop.origin}/product/${productId}`), page.click(".recs-item a")]);
    expect(await page.textContent("#product")).toBe(productId);

    // The page saw its request cut off by the navigation it did not wait for; keepalive carried it through.
    const sent = requests.filter((r) => r.method === "POST" && r.url.endsWith("/api/v1/interactions/"));
    expect(sent.length).toBe(1);
    expect(JSON.parse(sent[0]!.body!)).toEqual({
      external_user_id: tenant.user,
      external_product_id: productId,
      interaction_type: "CLICK",
      recommendation_id: recommendationId,
    });

    let clicks = before;
    for (let i = 0; i < 50 && clicks.length === before.length; i++) {
      await Bun.sleep(100);
      clicks = await clicksOf(tenant.user, productId);
    }
    expect(clicks.length).toBe(before.length + 1);

    // Credited to the very answer the carousel showed, at the product's place in it.
    let credited: Record<string, unknown> | undefined;
    for (let i = 0; i < 100 && credited === undefined; i++) {
      const exported = await service.call("GET", `/api/v1/end-users/external/${tenant.user}/export`, {
        apiKey: tenant.secretKey,
      });
      expect(exported.status).toBe(200);
      credited = (exported.body.attributions as Record<string, unknown>[]).find(
        (a) => a.recommendation_id === recommendationId && a.external_product_id === productId,
      );
      if (credited === undefined) await Bun.sleep(100);
    }
    expect(credited).toMatchObject({ interaction_type: "CLICK", position: 0, revenue: 0 });
    expect(String(credited?.endpoint)).toContain("homepage");
    await page.context().close();
  }, 60_000);

  test("renders every mode (homepage, product-page, cart, checkout, personalized) with its own title and limit", async () => {
    const { page, warnings } = await openPage(`${shop.origin}/modes`, { width: 1280, height: 800 });
    await page.waitForFunction(() => document.querySelectorAll(".recs-widget").length === 6, undefined, {
      timeout: 20_000,
    });
    const shown = await page.$$eval("[data-recs]", (elements) =>
      elements.map((el) => ({
        mode: (el as HTMLElement).dataset.recs,
        className: el.querySelector(".recs-widget")?.className,
        title: el.querySelector(".recs-title")?.textContent,
        items: el.querySelectorAll(".recs-item").length,
        products: [...el.querySelectorAll<HTMLElement>(".recs-item")].map((item) => item.dataset.productId),
      })),
    );
    for (const widget of shown) {
      expect(widget.className).toBe(`recs-widget recs-widget--${widget.mode}`);
      expect(widget.items).toBeGreaterThan(0);
    }
    expect(shown[0]!.items).toBe(5);
    expect(shown[1]!.title).toBe("Similar picks");
    expect(shown[1]!.products).not.toContain("demo-p-0001");
    expect(shown[2]!.products).not.toContain("demo-p-0002");
    expect(shown[4]!.items).toBe(6);
    // Without data-limit a personalised row shows 12, not the route's page of 100.
    expect(shown[5]!.items).toBe(12);
    // Four checkout cards fit a desktop row: no arrows that would move nothing.
    expect(shown[3]!.items).toBeLessThanOrEqual(4);
    expect(await page.isVisible('[data-recs="checkout"] .recs-nav')).toBe(false);
    expect(warnings).toEqual([]);
    await page.screenshot({ path: screenshotPath("widget-modes"), fullPage: true });
    await page.context().close();
  }, 60_000);

  test("on an origin the key does not allow, the page stays as it was, no call succeeds and one warning is logged", async () => {
    const { page, warnings, requests } = await openPage(`${shop.foreignOrigin}/`, {
      width: 1280,
      height: 800,
    });
    await page
      .waitForEvent("console", { predicate: (m) => m.type() === "warning", timeout: 20_000 })
      .catch(() => {});
    await Bun.sleep(500);
    expect(warnings.length).toBe(1);
    expect(warnings[0]).toContain("[recs widget]");
    expect(await page.$$(".recs-widget, .recs-item, #recs-widget-style")).toEqual([]);
    expect(await page.$eval("#recs", (el) => el.outerHTML)).toBe(
      `<div id="recs" data-recs="homepage" data-user="${tenant.user}" data-currency="EUR"></div>`,
    );
    const apiCalls = requests.filter((r) => r.url.includes("/api/v1/") && r.method !== "OPTIONS");
    expect(apiCalls.length).toBeGreaterThan(0);
    for (const call of apiCalls) expect(call.status).toBe("failed");
    await page.screenshot({ path: screenshotPath("widget-foreign-origin") });
    await page.context().close();
  }, 60_000);
});

describe.skipIf(skipReason !== undefined)("the typed client in Chromium", () => {
  test("works from a shop's page with its publishable key, and fails with a clear CORS error on a secret key's routes", async () => {
    const { page, errors } = await openPage(`${shop.origin}/client`, { width: 1280, height: 800 });
    await page.waitForFunction(() => (window as unknown as { ready?: boolean }).ready === true);
    const run = (apiKey: string, call: string) =>
      page.evaluate(
        ([key, which]) =>
          (window as unknown as { run: (k: string, c: string) => Promise<unknown> }).run(key!, which!),
        [apiKey, call],
      ) as Promise<Record<string, unknown>>;

    expect(await run(tenant.publishableKey, "homepage")).toEqual({ ok: true, items: 4 });

    for (const key of [tenant.publishableKey, tenant.secretKey]) {
      const refused = await run(key, "products");
      expect(refused).toMatchObject({ ok: false, name: "RecsNetworkError", network: true, api: false });
      expect(String(refused.message)).toContain("CORS");
      expect(String(refused.message)).toContain("publishable key");
    }
    // What the browser itself says: the preflight carried no grant.
    expect(errors.filter((e) => e.includes("blocked by CORS policy")).length).toBe(2);
    await page.context().close();
  }, 60_000);

  test("on an origin the key does not allow, the publishable key's call is refused by CORS too", async () => {
    const { page } = await openPage(`${shop.foreignOrigin}/client`, { width: 1280, height: 800 });
    await page.waitForFunction(() => (window as unknown as { ready?: boolean }).ready === true);
    const refused = await page.evaluate(
      (key) =>
        (window as unknown as { run: (k: string, c: string) => Promise<unknown> }).run(key, "homepage"),
      tenant.publishableKey,
    );
    expect(refused).toMatchObject({ ok: false, name: "RecsNetworkError" });
    await page.context().close();
  }, 60_000);
});

/** The end user's CLICKs on a product, newest first, as the shop's back end can read them. */
async function clicksOf(user: string, productId: string) {
  const latest = await service.call("GET", "/api/v1/interactions/?limit=100", { apiKey: tenant.secretKey });
  return (latest.body.items as Record<string, unknown>[]).filter(
    (i) =>
      i.external_user_id === user && i.external_product_id === productId && i.interaction_type === "CLICK",
  );
}
