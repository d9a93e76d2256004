import { Elysia } from "elysia";
import type { AppDeps } from "../../app-deps";
import { authPlugin } from "../../http/auth";
import { ELYSIA_CONFIG } from "../../http/kernel";
import type { ServiceModule } from "../module";
import { getSandboxStatus } from "./get-status";
import { quickStartSandbox } from "./quick-start";
import { resetSandbox } from "./reset";
import { QuickStartResult, ResetResult, SandboxStatus } from "./schemas";

const tags = ["Sandbox"];

function sandboxRoutes(deps: AppDeps) {
  return new Elysia({ ...ELYSIA_CONFIG, name: "sandbox", prefix: "/api/v1/sandbox" })
    .use(authPlugin(deps))
    .get("/status", ({ tenant }) => getSandboxStatus({ ctx: tenant, deps }), {
      auth: { mode: "keyOrJwt" },
      response: { 200: SandboxStatus },
      detail: {
        tags,
        summary: "Sandbox state and data counts",
        description: "Counts of the account's products, end users, interactions, models and jobs.",
      },
    })
    .post("/reset", ({ tenant }) => resetSandbox({ ctx: tenant, deps }), {
      auth: { mode: "keyOrJwt" },
      response: { 200: ResetResult },
      detail: {
        tags,
        summary: "Delete the account's experimental data (FREE plan only)",
        description:
          "Deletes products, end users (with their interactions, searches, orders and recommendation logs), " +
          "models and jobs, and the online metrics and attributions, and answers the counts deleted. Other plans: 403 FREE_PLAN_ONLY.",
      },
    })
    .post("/quick-start", ({ tenant }) => quickStartSandbox({ ctx: tenant, deps }), {
      auth: { mode: "keyOrJwt" },
      response: { 200: QuickStartResult },
      detail: {
        tags,
        summary: "Load a demo catalogue and start a training job",
        description:
          "Generates ~200 products over ten categories with brands and prices, 100 end users with favourite " +
          "categories and a price range, and 3000 interactions following a view → click → cart → purchase " +
          "funnel, then queues a training job (jobId null when the day's training allowance is used up). " +
          "409 CONFLICT when the demo data is already loaded; 429 PLAN_LIMIT_EXCEEDED when it would not fit " +
          "the plan's catalogue limits.",
      },
    });
}

export const sandboxModule: ServiceModule = {
  name: "sandbox",
  routes: sandboxRoutes,
};
