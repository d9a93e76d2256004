/**
 * Starting an A/B experiment from the Online results page in Debian's Chromium, against the service as a
 * child process: the form's own checks in plain words, the service's 422 details next to their fields, a
 * second experiment on a busy endpoint refused, and the started experiment listed as running with its arms.
 */
import { describe, expect, test } from "bun:test";
import type { Locator, Page } from "playwright-core";
import { errorBody, openDashboard, signUp } from "./support/dashboard";
import { browserSuite } from "./support/harness";

const suite = browserSuite();
const { skipReason } = suite;

const arm = (page: Page, at: number): Locator => page.getByTestId("arm-fields").nth(at);

async function openForm(page: Page): Promise<Locator> {
  await page.getByRole("button", { name: "New experiment" }).click();
  const form = page.getByRole("form", { name: "New experiment" });
  await form.waitFor();
  return form;
}

describe.skipIf(skipReason !== undefined)("starting an experiment in Chromium", () => {
  test("the form starts an experiment that is listed as running with its arms; a bad split is said at the arms", async () => {
    const owner = await signUp(suite.service);
    const { page, problems, close } = await openDashboard(
      suite.browser,
      suite.service,
      "/results",
      owner.token,
    );
    let posts = 0;
    page.on("request", (request) => {
      if (request.method() === "POST" && new URL(request.url()).pathname === "/api/v1/experiments/") posts++;
    });
    try {
      await page.getByText("No experiments yet.").waitFor();
      const form = await openForm(page);
      // The form is ready to type into, and Cancel gives focus back to the button that opened it.
      expect(await page.evaluate(() => document.activeElement?.closest("label")?.textContent)).toBe("Name");
      await form.getByRole("button", { name: "Cancel" }).click();
      await page.getByRole("button", { name: "New experiment" }).waitFor();
      expect(await page.evaluate(() => document.activeElement?.textContent)).toBe("New experiment");

      await openForm(page);
      // Nothing filled in but a third arm and a split that does not add up.
      await page.getByRole("button", { name: "Add an arm" }).click();
      await arm(page, 0).getByLabel("Traffic (%)").fill("50");
      await arm(page, 1).getByLabel("Traffic (%)").fill("30");
      await arm(page, 2).getByLabel("Traffic (%)").fill("10");
      await arm(page, 2).getByLabel("Arm name").fill("two words");
      await page.getByRole("button", { name: "Start the experiment" }).click();
      await page.getByText("The arms' shares add up to 90%; they must add up to exactly 100%.").waitFor();
      await page.getByText("Give the experiment a name.").waitFor();
      await arm(page, 2)
        .getByText("Letters, digits, dots, dashes and underscores only (no spaces).")
        .waitFor();
      expect(await page.getByLabel("Name", { exact: true }).getAttribute("aria-invalid")).toBe("true");
      expect(posts).toBe(0);

      await page.getByLabel("Name", { exact: true }).fill("Popularity and discovery against hybrid");
      await arm(page, 1).getByLabel("Strategy").selectOption("popularity");
      await arm(page, 2).getByLabel("Arm name").fill("discovery");
      await arm(page, 2).getByLabel("Goal").selectOption("discovery");
      await page.getByRole("button", { name: "Split the traffic evenly" }).click();
      expect(await arm(page, 2).getByLabel("Traffic (%)").inputValue()).toBe("33.34");
      await page.getByLabel(/Smallest difference worth finding/).fill("5");
      await page.getByRole("button", { name: "Start the experiment" }).click();

      expect(await page.getByTestId("experiment-started").textContent()).toContain(
        '"Popularity and discovery against hybrid" is running on personalized/query with 3 arms.',
      );
      const experiment = page
        .getByTestId("experiment")
        .filter({ hasText: "Popularity and discovery against hybrid" });
      expect(await experiment.getAttribute("data-status")).toBe("running");
      const arms = experiment.getByTestId("experiment-arm");
      await arms.first().waitFor();
      expect(await arms.count()).toBe(3);
      expect(await arms.nth(0).textContent()).toMatch(/^control \(control\)33\.33%as usual/);
      expect(await arms.nth(1).textContent()).toMatch(/^treatment33\.33%strategy popularity/);
      expect(await arms.nth(2).textContent()).toMatch(/^discovery33\.34%recommendation_goal discovery/);
      expect(await experiment.getByRole("button", { name: "Stop experiment" }).count()).toBe(1);

      // The arms can be compared on another metric.
      await experiment.getByLabel("Compare the arms on").selectOption("conversion");
      await experiment.getByText(/^Verdict on conversion rate: /).waitFor();

      const stored = await suite.service.call("GET", "/api/v1/experiments/", { apiKey: owner.secretKey });
      expect(stored.body.items).toHaveLength(1);
      expect(stored.body.items[0]).toMatchObject({
        status: "running",
        endpoint: "personalized/query",
        minimumEffect: 0.05,
        variants: [
          { name: "control", traffic: 0.3333 },
          { name: "treatment", traffic: 0.3333, overrides: { strategy: "popularity" } },
          { name: "discovery", traffic: 0.3334, overrides: { recommendation_goal: "discovery" } },
        ],
      });
      expect(posts).toBe(1);
      expect(problems).toEqual([]);

      // A second one on the same endpoint is refused with the service's reason, under the form.
      await openForm(page);
      await page.getByLabel("Name", { exact: true }).fill("Another one");
      await page.getByRole("button", { name: "Start the experiment" }).click();
      await page
        .getByRole("form", { name: "New experiment" })
        .getByRole("alert")
        .filter({ hasText: "An experiment is already running on personalized/query; stop it first" })
        .waitFor();
    } finally {
      await close();
    }
  }, 90_000);

  test("the service's 422 details appear next to the fields they are about", async () => {
    const owner = await signUp(suite.service);
    const { page, close } = await openDashboard(suite.browser, suite.service, "/results", owner.token);
    try {
      await page.getByText("No experiments yet.").waitFor();
      // A pinned model whose artifact is gone is only known to the service.
      await page.route("**/api/v1/experiments/", (route) => {
        if (route.request().method() !== "POST") return route.continue();
        return route.fulfill({
          status: 422,
          headers: { "content-type": "application/json" },
          body: JSON.stringify({
            ...JSON.parse(errorBody("Request validation failed", "VALIDATION_ERROR")),
            detail: [
              {
                loc: ["body", "variants", 1, "overrides", "model_version"],
                msg: "Model version 2 can no longer be served",
                type: "value_error.model_version.artifact_unavailable",
              },
              { loc: ["body", "variants"], msg: "Traffic shares must sum to 1", type: "value_error.sum" },
              { loc: ["body", "colour"], msg: "is not an accepted field", type: "value_error" },
            ],
          }),
        });
      });
      await openForm(page);
      await page.getByLabel("Name", { exact: true }).fill("Pinned model");
      await page.getByRole("button", { name: "Start the experiment" }).click();
      const version = arm(page, 1).getByLabel("Model version");
      await arm(page, 1).getByText("Model version 2 can no longer be served").waitFor();
      expect(await version.getAttribute("aria-invalid")).toBe("true");
      expect(await arm(page, 0).getByLabel("Model version").getAttribute("aria-invalid")).toBe("false");
      await page.getByRole("group", { name: /^Arms/ }).getByText("Traffic shares must sum to 1").waitFor();
      // What no field of the form shows stays in the list under it, and only that.
      const alert = page.getByRole("form", { name: "New experiment" }).getByRole("alert");
      expect(await alert.textContent()).toContain("colour: is not an accepted field");
      expect(await alert.textContent()).not.toContain("can no longer be served");
    } finally {
      await close();
    }
  }, 60_000);
});
