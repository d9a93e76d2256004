/**
 * The dashboard's session and its confirmed actions in Debian's Chromium, against the service as a child
 * process on the suite's store: signing in and out, pages reached by a link while signed out, an account
 * that cannot be read, and what the person sees when a write the page depends on is refused. Refusals the
 * service would only give under load are made with request interception.
 */
import { describe, expect, test } from "bun:test";
import type { Page } from "playwright-core";
import { errorBody, type Owner, openDashboard, signUp } from "./support/dashboard";
import { browserSuite } from "./support/harness";

const suite = browserSuite();
const { skipReason } = suite;

const TOKEN_KEY = "rs-dashboard-token";
const tokenIn = (page: Page) => page.evaluate((key) => sessionStorage.getItem(key), TOKEN_KEY);

async function logIn(page: Page, owner: Owner): Promise<void> {
  await page.getByRole("heading", { name: "Log in" }).waitFor();
  await page.getByLabel("E-mail").fill(owner.email);
  await page.getByLabel("Password").fill(owner.password);
  await page.getByRole("button", { name: "Log in" }).click();
}

const quotaRefusal = {
  status: 429,
  headers: { "content-type": "application/json", "retry-after": "60" },
  body: errorBody("Monthly request quota of 520 reached", "PLAN_LIMIT_EXCEEDED"),
};

describe.skipIf(skipReason !== undefined)("the dashboard session in Chromium", () => {
  test("a page opened while signed out is the one shown after logging in", async () => {
    const owner = await signUp(suite.service);
    const { page, close } = await openDashboard(suite.browser, suite.service, "/training?from=mail");
    try {
      await page.getByRole("heading", { name: "Log in" }).waitFor();
      expect(new URL(page.url()).pathname).toBe("/dashboard/login");
      await logIn(page, owner);
      await page.getByRole("heading", { level: 1, name: "Training" }).waitFor();
      const landed = new URL(page.url());
      expect(landed.pathname + landed.search).toBe("/dashboard/training?from=mail");
    } finally {
      await close();
    }
  }, 60_000);

  test("after logging in, a `next` leading out of the app opens Home instead", async () => {
    const owner = await signUp(suite.service);
    for (const next of ["//evil.example/x", "https://evil.example/", "/\\evil.example", "/../../api/v1/"]) {
      const { page, close } = await openDashboard(
        suite.browser,
        suite.service,
        `/login?next=${encodeURIComponent(next)}`,
      );
      try {
        await logIn(page, owner);
        await page.getByRole("heading", { name: "Welcome, Dashboard shop" }).waitFor();
        const landed = new URL(page.url());
        expect({ next, at: landed.origin + landed.pathname }).toEqual({
          next,
          at: `${suite.service.baseUrl}/dashboard/`,
        });
      } finally {
        await close();
      }
    }
  }, 60_000);

  test("an account that cannot be read still shows the navigation, the error and Log out", async () => {
    const owner = await signUp(suite.service);
    const { page, close } = await openDashboard(suite.browser, suite.service, "/keys", owner.token);
    try {
      await page.route("**/api/v1/accounts/current", (route) => route.fulfill(quotaRefusal));
      await page.reload();
      await page.getByRole("alert").filter({ hasText: "Monthly request quota of 520 reached" }).waitFor();
      expect(await page.getByRole("navigation", { name: "Dashboard" }).getByRole("link").count()).toBe(8);

      // Log out refused: the person is told the session still works, and stays signed in.
      await page.route("**/api/v1/auth/logout", (route) => route.fulfill(quotaRefusal));
      await page.getByRole("button", { name: "Log out" }).click();
      await expect(page.getByTestId("logout-refused").textContent()).resolves.toContain(
        "You are still signed in",
      );
      expect(await tokenIn(page)).toBe(owner.token);
      expect(new URL(page.url()).pathname).toBe("/dashboard/keys");

      await page.unroute("**/api/v1/auth/logout");
      await page.getByRole("button", { name: "Try logging out again" }).click();
      await page.getByRole("heading", { name: "Log in" }).waitFor();
      expect(await tokenIn(page)).toBeNull();
      const after = await suite.service.call("GET", "/api/v1/system-users/me", { token: owner.token });
      expect(after.status).toBe(401);
    } finally {
      await close();
    }
  }, 60_000);

  test("a key created while the checklist update is refused is shown once and listed", async () => {
    const owner = await signUp(suite.service);
    const { page, close } = await openDashboard(suite.browser, suite.service, "/keys", owner.token);
    try {
      await page.getByRole("heading", { name: "Active keys" }).waitFor();
      await page.route("**/api/v1/accounts/current", (route) =>
        route.request().method() === "PATCH" ? route.fulfill(quotaRefusal) : route.continue(),
      );
      await page.getByLabel("Name").fill("Checkout page");
      await page.getByLabel("secret").check();
      await page.getByRole("button", { name: "Create the key" }).click();
      const key = (await page.getByTestId("new-key").textContent())?.trim() ?? "";
      expect(key).toMatch(/^sk_live_[A-Za-z0-9]{32,}$/);
      await page.getByRole("row").filter({ hasText: "Checkout page" }).waitFor();
      expect(await page.getByRole("alert").count()).toBe(0);

      // Home ticks the step from the keys themselves.
      await page.unroute("**/api/v1/accounts/current");
      await page.getByRole("navigation", { name: "Dashboard" }).getByRole("link", { name: "Home" }).click();
      await page.getByRole("heading", { name: "Current model" }).waitFor();
      const step = page.getByLabel("Create an API key for your shop");
      await expect(step.isChecked()).resolves.toBe(true);
    } finally {
      await close();
    }
  }, 60_000);

  test("a refused revoke is told inside its dialog, which starts on Cancel and is busy while it runs", async () => {
    const owner = await signUp(suite.service);
    const made = await suite.service.call("POST", "/api/v1/api-keys/", {
      token: owner.token,
      body: { name: "Old widget", kind: "secret" },
    });
    expect(made.status).toBe(201);
    const { page, close } = await openDashboard(suite.browser, suite.service, "/keys", owner.token);
    try {
      const row = page.getByRole("row").filter({ hasText: "Old widget" });
      await row.getByRole("button", { name: /^Revoke/ }).click();
      const dialog = page.getByRole("dialog");
      await dialog.waitFor();
      // Enter straight away answers Cancel, not the destructive button.
      expect(await page.evaluate(() => document.activeElement?.textContent)).toBe("Cancel");
      await page.keyboard.press("Enter");
      await dialog.waitFor({ state: "hidden" });
      expect(await row.count()).toBe(1);

      // Revoked elsewhere meanwhile: the service answers 404, slowly enough to see the busy button.
      await row.getByRole("button", { name: /^Revoke/ }).click();
      const gone = await suite.service.call("DELETE", `/api/v1/api-keys/${made.body.id}`, {
        token: owner.token,
      });
      expect(gone.status).toBe(204);
      await page.route("**/api/v1/api-keys/*", async (route) => {
        await Bun.sleep(500);
        await route.continue();
      });
      const confirm = dialog.getByRole("button", { name: "Revoke the key" });
      await confirm.click();
      await expect(confirm.isDisabled()).resolves.toBe(true);
      await dialog.getByRole("alert").waitFor();
      expect(await dialog.getByRole("alert").textContent()).toMatch(/not found/i);
      expect(await confirm.isEnabled()).toBe(true);
      // The list was read again behind the dialog: the key is no longer there.
      await dialog.getByRole("button", { name: "Cancel" }).click();
      await row.waitFor({ state: "detached" });
      expect(await page.getByRole("alert").count()).toBe(0);
    } finally {
      await close();
    }
  }, 60_000);

  test("a refused sandbox reset is told inside its dialog", async () => {
    const owner = await signUp(suite.service);
    const { page, close } = await openDashboard(suite.browser, suite.service, "/usage", owner.token);
    try {
      await page.route("**/api/v1/sandbox/reset", (route) => route.fulfill(quotaRefusal));
      await page.getByRole("button", { name: "Reset the sandbox" }).click();
      const dialog = page.getByRole("dialog");
      await dialog.getByLabel(/Type .* to confirm/).fill("reset");
      await dialog.getByRole("button", { name: "Delete everything" }).click();
      await dialog.getByRole("alert").filter({ hasText: "Monthly request quota of 520 reached" }).waitFor();
      expect(await dialog.isVisible()).toBe(true);
    } finally {
      await close();
    }
  }, 60_000);
});
