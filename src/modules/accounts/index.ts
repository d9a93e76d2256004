import { Elysia } from "elysia";
import type { AppDeps } from "../../app-deps";
import { authPlugin } from "../../http/auth";
import { ELYSIA_CONFIG } from "../../http/kernel";
import type { ServiceModule } from "../module";
import { getCurrentAccount } from "./get";
import { AccountResponse, AccountUpdate } from "./schemas";
import { mayPatchAccount, mayReplaceAccount, patchCurrentAccount, replaceCurrentAccount } from "./update";

const tags = ["Account"];
const fieldNames =
  "Bodies use the record's names: `name`, `is_active`, `onboarding_checklist_status`, `payment_customer_id`.";

/** GET/PUT/PATCH /api/v1/accounts/current (GET /accounts/usage lives in the usage module). */
function accountsRoutes(deps: AppDeps) {
  return new Elysia({ ...ELYSIA_CONFIG, name: "accounts", prefix: "/api/v1/accounts" })
    .use(authPlugin(deps))
    .get("/current", ({ tenant }) => getCurrentAccount({ ctx: tenant, deps }), {
      auth: { mode: "keyOrJwt" },
      response: { 200: AccountResponse },
      detail: {
        tags,
        summary: "The caller's account",
        description: "Secret API key or user JWT; publishable keys answer 403 INSUFFICIENT_SCOPE.",
      },
    })
    .put("/current", ({ tenant, body }) => replaceCurrentAccount({ ctx: tenant, deps, input: body }), {
      auth: { mode: "keyOrJwt", permission: mayReplaceAccount },
      body: AccountUpdate,
      response: { 200: AccountResponse },
      detail: {
        tags,
        summary: "Replace the account's settings (platform administrators only)",
        description:
          "Needs the JWT of a user listed in ADMIN_EMAILS, else 403 ADMIN_REQUIRED whatever the body holds. " +
          `\`name\` and \`is_active\` are required. ${fieldNames} An inactive account's keys and tokens ` +
          "answer 403 FORBIDDEN.",
      },
    })
    .patch("/current", ({ tenant, body }) => patchCurrentAccount({ ctx: tenant, deps, input: body }), {
      auth: { mode: "keyOrJwt", permission: mayPatchAccount },
      body: AccountUpdate,
      response: { 200: AccountResponse },
      detail: {
        tags,
        summary: "Change some account settings",
        description:
          "Everyone may change `onboarding_checklist_status`, whose keys are merged into the stored object " +
          "(PUT replaces it); `name`, `is_active` and `payment_customer_id` " +
          `need a platform administrator's JWT (else 403 ADMIN_REQUIRED, before their values are checked). ${fieldNames}`,
      },
    });
}

export const accountsModule: ServiceModule = {
  name: "accounts",
  routes: accountsRoutes,
};
