import { Elysia } from "elysia";
import type { AppDeps } from "../../app-deps";
import { authPlugin } from "../../http/auth";
import { ELYSIA_CONFIG } from "../../http/kernel";
import type { ServiceModule } from "../module";
import { recordUsage } from "../usage/record";
import { createEndUser } from "./create";
import { eraseEndUser } from "./erase";
import { bridgeErasureNotifications } from "./events";
import { exportEndUser } from "./export";
import { getEndUser } from "./get";
import { listEndUsers } from "./list";
import { patchEndUser } from "./patch";
import {
  EndUser,
  EndUserCreate,
  EndUserExport,
  EndUserListQuery,
  EndUserPage,
  EndUserPatch,
  EndUserPath,
  ErasureResult,
} from "./schemas";

const tags = ["End users"];

function endUsersRoutes(deps: AppDeps) {
  return new Elysia({ ...ELYSIA_CONFIG, name: "end-users", prefix: "/api/v1/end-users" })
    .use(authPlugin(deps))
    .post(
      "/",
      async ({ tenant, body }) => {
        const endUser = await createEndUser({ ctx: tenant, deps, input: body });
        recordUsage(deps, tenant.accountId, { ingestedRecords: 1 });
        return endUser;
      },
      {
        auth: { mode: "keyOrJwt" },
        body: EndUserCreate,
        response: { 200: EndUser },
        detail: {
          tags,
          summary: "Create an end user",
          description:
            "Registers one of the shop's customers. An externalId already in use answers 409 CONFLICT (bulk " +
            "ingestion upserts instead). End users are also created by their first interaction. An account " +
            "at its plan's maxEndUsers answers 429 PLAN_LIMIT_EXCEEDED.",
        },
      },
    )
    .get("/", ({ tenant, query }) => listEndUsers({ ctx: tenant, deps, input: query }), {
      auth: { mode: "keyOrJwt" },
      query: EndUserListQuery,
      response: { 200: EndUserPage },
      detail: {
        tags,
        summary: "List end users",
        description: "End users in creation order, as a pagination envelope.",
      },
    })
    .get(
      "/external/:external_user_id",
      ({ tenant, params }) =>
        getEndUser({ ctx: tenant, deps, input: { externalId: params.external_user_id } }),
      {
        auth: { mode: "keyOrJwt" },
        params: EndUserPath,
        response: { 200: EndUser },
        detail: {
          tags,
          summary: "Get an end user by external id",
          description: "URL-encode reserved characters.",
        },
      },
    )
    .patch(
      "/external/:external_user_id",
      ({ tenant, params, body }) =>
        patchEndUser({ ctx: tenant, deps, input: { externalId: params.external_user_id, changes: body } }),
      {
        auth: { mode: "keyOrJwt" },
        params: EndUserPath,
        body: EndUserPatch,
        response: { 200: EndUser },
        detail: {
          tags,
          summary: "Update an end user's profile",
          description:
            "Partial update of preferred categories, price range and attributes: only the fields in the body " +
            "change, `null` clears a price bound, and a range whose minimum would exceed its maximum (given or " +
            "stored) is a 422. The next recommendation for the user reflects the change. Unknown end users " +
            "answer 404 (they are created by POST or by their first interaction).",
        },
      },
    )
    .delete(
      "/external/:external_user_id",
      ({ tenant, params }) =>
        eraseEndUser({ ctx: tenant, deps, input: { externalId: params.external_user_id } }),
      {
        auth: { mode: "keyOrJwt" },
        params: EndUserPath,
        response: { 200: ErasureResult },
        detail: {
          tags,
          summary: "Erase an end user (right to erasure)",
          description:
            "Hard-deletes the end user with all their interactions, searches, recommendation logs and orders " +
            "in one transaction and answers the counts. Caches in every process forget the user at once; " +
            "the next training no longer sees them. Bulk-ingestion jobs accepted earlier and not yet done " +
            "apply none of their records afterwards; an end user only named by such a job is erased from it " +
            "(every count 0). Anyone else unknown: 404.",
        },
      },
    )
    .get(
      "/external/:external_user_id/export",
      ({ tenant, params }) =>
        exportEndUser({ ctx: tenant, deps, input: { externalId: params.external_user_id } }),
      {
        auth: { mode: "keyOrJwt" },
        params: EndUserPath,
        response: { 200: EndUserExport },
        detail: {
          tags,
          summary: "Export an end user's data (right of access)",
          description:
            "The end-user record with every interaction, search, recommendation and order kept about them.",
        },
      },
    );
}

export const endUsersModule: ServiceModule = {
  name: "end-users",
  routes: endUsersRoutes,
  // Erasures made by other processes reach this app's caches through NOTIFY.
  start: (deps) => bridgeErasureNotifications(deps.database, deps.logger, deps.events.endUserErased),
};
