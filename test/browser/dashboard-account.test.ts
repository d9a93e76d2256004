/**
 * The Account page in Debian's Chromium, against the service as a child process: changing the name, e-mail
 * and password of the signed-in user, the login throttle met by wrong current passwords, renaming the
 * account (platform administrators only) and deleting the user behind a typed confirmation.
 */
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { makeTempDir } from "../helpers/temp-dirs";
import { errorBody, type Owner, openDashboard, signUp } from "./support/dashboard";
import { browserSuite } from "./support/harness";

const ADMIN_EMAIL = `account-admin-${crypto.randomUUID()}@example.com`;
const dataDir = join(makeTempDir("rs-account-"), "data");
const suite = browserSuite({ ADMIN_EMAILS: ADMIN_EMAIL, DATA_DIR: dataDir });
const { skipReason } = suite;

/** The verification link of the newest message the service wrote to its outbox for `email`, if any. */
function verificationLink(email: string): string | undefined {
  const dir = join(dataDir, "outbox");
  for (const file of readdirSync(dir).sort().reverse()) {
    if (!file.endsWith(".eml")) continue;
    // Quoted-printable soft line breaks and "=3D" are undone before the link is read.
    const text = readFileSync(join(dir, file), "utf8")
      .replace(/=\r?\n/g, "")
      .replace(/=3D/g, "=");
    const match = /https?:\/\/\S+\/api\/v1\/auth\/verify-email\?token=[A-Za-z0-9_.-]+/.exec(text);
    if (text.includes(`To: ${email}`) && match !== null) return match[0];
  }
  return undefined;
}

const tokenIn = (page: Page) => page.evaluate(() => sessionStorage.getItem("rs-dashboard-token"));

async function changePassword(page: Page, current: string, next: string): Promise<void> {
  await page.getByLabel("Current password", { exact: true }).fill(current);
  await page.getByLabel("New password", { exact: true }).fill(next);
  await page.getByLabel("New password again", { exact: true }).fill(next);
  await page.getByRole("button", { name: "Change the password" }).click();
}

async function logIn(page: Page, email: string, password: string): Promise<void> {
  await page.getByLabel("E-mail").fill(email);
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: "Log in" }).click();
}

describe.skipIf(skipReason !== undefined)("the Account page in Chromium", () => {
  test("the Account link opens the page with the user's e-mail", async () => {
    const owner = await signUp(suite.service);
    const { page, problems, close } = await openDashboard(suite.browser, suite.service, "/", owner.token);
    try {
      await page
        .getByRole("navigation", { name: "Dashboard" })
        .getByRole("link", { name: "Account" })
        .click();
      await page.getByRole("heading", { level: 1, name: "Account" }).waitFor();
      expect(await page.getByLabel("E-mail").inputValue()).toBe(owner.email);
      // Focus moves to the page's heading, as after any other link of the navigation.
      await page.waitForFunction(() => document.activeElement?.textContent === "Account", undefined, {
        timeout: 10_000,
      });
      expect(problems).toEqual([]);
    } finally {
      await close();
    }
  }, 60_000);

  test("a new password ends this session: the old token is refused and the new password logs in", async () => {
    const owner = await signUp(suite.service);
    const { page, close } = await openDashboard(suite.browser, suite.service, "/account", owner.token);
    try {
      await page.getByRole("heading", { name: "Password" }).waitFor();
      // Checked on the page before anything is sent.
      await changePassword(page, owner.password, "short");
      await page.getByText("At least 8 characters.").waitFor();
      expect(await page.getByLabel("New password", { exact: true }).getAttribute("aria-invalid")).toBe(
        "true",
      );

      await changePassword(page, owner.password, "a-brand-new-pass-456");
      await page.getByRole("heading", { name: "Log in" }).waitFor();
      expect(await page.getByTestId("login-notice").textContent()).toContain("Your password was changed");
      expect(await tokenIn(page)).toBeNull();
      const old = await suite.service.call("GET", "/api/v1/system-users/me", { token: owner.token });
      expect(old.status).toBe(401);

      await logIn(page, owner.email, "a-brand-new-pass-456");
      await page.getByRole("heading", { name: "Welcome, Dashboard shop" }).waitFor();
      const fresh = await tokenIn(page);
      expect(fresh).not.toBeNull();
      expect(fresh).not.toBe(owner.token);
      const me = await suite.service.call("GET", "/api/v1/system-users/me", { token: fresh ?? "" });
      expect(me.status).toBe(200);
      const refused = await suite.service.call("POST", "/api/v1/auth/token", {
        body: { email: owner.email, password: owner.password },
      });
      expect(refused.status).toBe(401);
    } finally {
      await close();
    }
  }, 60_000);

  test("a wrong current password is said so, and past the login throttle the wait is told", async () => {
    const owner = await signUp(suite.service);
    const { page, close } = await openDashboard(suite.browser, suite.service, "/account", owner.token);
    try {
      await page.getByRole("heading", { name: "Password" }).waitFor();
      await changePassword(page, "not-my-password", "another-pass-789");
      const alert = page.getByRole("alert");
      await alert.filter({ hasText: "The current password is incorrect" }).waitFor();
      expect(await page.getByLabel("Current password", { exact: true }).getAttribute("aria-invalid")).toBe(
        "true",
      );
      // Still signed in, on the same page.
      expect(await tokenIn(page)).toBe(owner.token);
      for (let attempt = 2; attempt <= 5; attempt++) {
        await changePassword(page, `wrong-${attempt}`, "another-pass-789");
        await page
          .getByRole("button", { name: "Change the password" })
          .and(page.locator(":enabled"))
          .waitFor();
      }
      await changePassword(page, "wrong-6", "another-pass-789");
      await alert.filter({ hasText: "Too many failed password attempts" }).waitFor();
      expect(await alert.textContent()).toMatch(/You can try again in about 1[45] minutes\./);
      expect(await tokenIn(page)).toBe(owner.token);
      const me = await suite.service.call("GET", "/api/v1/system-users/me", { token: owner.token });
      expect(me.status).toBe(200);
    } finally {
      await close();
    }
  }, 60_000);

  test("a new e-mail address is saved and a verification link is sent to it", async () => {
    const owner = await signUp(suite.service);
    const { page, close } = await openDashboard(suite.browser, suite.service, "/account", owner.token);
    const newEmail = `moved-${crypto.randomUUID()}@example.com`;
    try {
      await page.getByLabel("Name", { exact: true }).fill("Ada Operator");
      await page.getByLabel("E-mail").fill(newEmail);
      // The current password is asked for once the address differs.
      const current = page.getByRole("form", { name: "You" }).getByLabel("Current password");
      await current.fill(owner.password);
      await page.getByRole("button", { name: "Save" }).click();
      const saved = page.getByTestId("profile-saved");
      await saved.waitFor();
      expect(await saved.textContent()).toContain(`Your e-mail address is now ${newEmail}`);
      expect(await saved.textContent()).toContain("a link was sent there");
      await page.getByText(newEmail, { exact: false }).first().waitFor();
      const me = await suite.service.call("GET", "/api/v1/system-users/me", { token: owner.token });
      expect(me.body).toMatchObject({ email: newEmail, fullName: "Ada Operator", emailVerified: false });
      expect(verificationLink(newEmail)).toBeDefined();
    } finally {
      await close();
    }
  }, 60_000);

  test("an administrator renames the account; anyone else sees the name with the reason it is fixed", async () => {
    const owner = await signUp(suite.service);
    const plain = await openDashboard(suite.browser, suite.service, "/account", owner.token);
    try {
      await plain.page.getByTestId("account-name-reason").waitFor();
      expect(await plain.page.getByTestId("account-name").textContent()).toBe("Dashboard shop");
      expect(await plain.page.getByTestId("account-name-reason").textContent()).toContain(
        "Only platform administrators",
      );
      expect(await plain.page.getByRole("button", { name: "Rename the account" }).count()).toBe(0);
    } finally {
      await plain.close();
    }
    // The service refuses the change too, whatever the page shows.
    const refused = await suite.service.call("PATCH", "/api/v1/accounts/current", {
      token: owner.token,
      body: { name: "Taken over" },
    });
    expect(refused.status).toBe(403);

    const registered = await suite.service.call("POST", "/api/v1/auth/register", {
      body: { accountName: "Admin shop", email: ADMIN_EMAIL, password: "admin-pass-12345" },
    });
    expect(registered.status).toBe(200);
    // ADMIN_EMAILS counts once the address is verified.
    const link = verificationLink(ADMIN_EMAIL);
    if (link === undefined) throw new Error("no verification mail for the administrator");
    // The link names PUBLIC_BASE_URL, which this service on a free port does not know: its path is taken.
    const { pathname, search } = new URL(link);
    expect((await fetch(`${suite.service.baseUrl}${pathname}${search}`)).status).toBe(200);
    const admin: Owner = {
      email: ADMIN_EMAIL,
      password: "admin-pass-12345",
      token: registered.body.accessToken,
      secretKey: registered.body.apiKey,
    };
    const { page, problems, close } = await openDashboard(
      suite.browser,
      suite.service,
      "/account",
      admin.token,
    );
    try {
      const name = page.getByRole("textbox", { name: "Account name" });
      await name.fill("");
      expect(await page.getByRole("button", { name: "Rename the account" }).isDisabled()).toBe(true);
      await name.fill("Renamed shop");
      await page.getByRole("button", { name: "Rename the account" }).click();
      expect(await page.getByTestId("account-name-saved").textContent()).toContain(
        "The account is now called Renamed shop",
      );
      const account = await suite.service.call("GET", "/api/v1/accounts/current", { token: admin.token });
      expect(account.body.name).toBe("Renamed shop");
      await page.getByRole("navigation", { name: "Dashboard" }).getByRole("link", { name: "Home" }).click();
      await page.getByRole("heading", { name: "Welcome, Renamed shop" }).waitFor();
      expect(problems).toEqual([]);
    } finally {
      await close();
    }
  }, 60_000);

  test("deleting the user takes the typed e-mail, says a refusal in the dialog, then signs out", async () => {
    const owner = await signUp(suite.service);
    const { page, close } = await openDashboard(suite.browser, suite.service, "/account", owner.token);
    try {
      await page.getByRole("button", { name: "Delete my user" }).click();
      const dialog = page.getByRole("dialog");
      const confirm = dialog.getByRole("button", { name: "Delete my user" });
      expect(await confirm.isDisabled()).toBe(true);
      await dialog.getByLabel(/Type .* to confirm/).fill("yes");
      expect(await confirm.isDisabled()).toBe(true);
      await dialog.getByLabel(/Type .* to confirm/).fill(owner.email);

      // A refusal is told inside the dialog, which stays open.
      let refusals = 0;
      await page.route("**/api/v1/system-users/me", (route) => {
        if (route.request().method() !== "DELETE" || refusals++ > 0) return route.continue();
        return route.fulfill({
          status: 503,
          headers: { "content-type": "application/json" },
          body: errorBody("The service is briefly unavailable", "SERVICE_UNAVAILABLE"),
        });
      });
      await confirm.click();
      await dialog.getByRole("alert").filter({ hasText: "briefly unavailable" }).waitFor();
      expect(await dialog.isVisible()).toBe(true);

      await confirm.click();
      await page.getByRole("heading", { name: "Log in" }).waitFor();
      expect(await page.getByTestId("login-notice").textContent()).toContain(
        `Your user ${owner.email} was deleted`,
      );
      expect(await tokenIn(page)).toBeNull();
    } finally {
      await close();
    }
    const me = await suite.service.call("GET", "/api/v1/system-users/me", { token: owner.token });
    expect(me.status).toBe(401);
    const login = await suite.service.call("POST", "/api/v1/auth/token", {
      body: { email: owner.email, password: owner.password },
    });
    expect(login.status).toBe(401);
    // It was the account's only user: its keys stop working.
    const withKey = await suite.service.call("GET", "/api/v1/accounts/current", { apiKey: owner.secretKey });
    expect(withKey.status).toBe(401);
  }, 60_000);
});
