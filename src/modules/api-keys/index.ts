import { Elysia, t } from "elysia";
import type { AppDeps } from "../../app-deps";
import { authPlugin } from "../../http/auth";
import { ELYSIA_CONFIG } from "../../http/kernel";
import type { ServiceModule } from "../module";
import { createApiKey } from "./create";
import { getCurrentApiKey, listApiKeys } from "./list";
import { renameApiKey } from "./rename";
import { revokeAllApiKeys, revokeApiKey } from "./revoke";
import {
  ApiKeyCreate,
  ApiKeyCreated,
  ApiKeyIdParams,
  ApiKeyList,
  ApiKeyMetadata,
  ApiKeyUpdate,
} from "./schemas";

const tags = ["API keys"];
const secretOnly = "Secret API key or user JWT; publishable keys answer 403 INSUFFICIENT_SCOPE.";

function apiKeysRoutes(deps: AppDeps) {
  return new Elysia({ ...ELYSIA_CONFIG, name: "api-keys", prefix: "/api/v1/api-keys" })
    .use(authPlugin(deps))
    .get("/", ({ tenant }) => listApiKeys({ ctx: tenant, deps }), {
      auth: { mode: "keyOrJwt" },
      response: { 200: ApiKeyList },
      detail: {
        tags,
        summary: "List the account's active API keys (metadata only)",
        description: `Never returns key values. ${secretOnly}`,
      },
    })
    .post(
      "/",
      async ({ tenant, body, set }) => {
        set.status = 201;
        return createApiKey({ ctx: tenant, deps, input: body });
      },
      {
        auth: { mode: "jwt" },
        body: ApiKeyCreate,
        response: { 201: ApiKeyCreated },
        detail: {
          tags,
          summary: "Create an API key (JWT required)",
          description:
            "Needs a user JWT (without one: 401 INVALID_TOKEN). `secret` keys (`sk_live_…`) may call every " +
            "K/J route; `publishable` keys (`pk_live_…`) only routes their `scopes` name, and only from an " +
            "Origin/Referer host listed in `allowedDomains` (required for publishable keys; `*.shop.com` " +
            "matches sub-domains). The full key is in `api_key` of this response only.",
        },
      },
    )
    .delete(
      "/",
      async ({ tenant, set }) => {
        await revokeAllApiKeys({ ctx: tenant, deps });
        set.status = 204;
      },
      {
        auth: { mode: "keyOrJwt" },
        response: { 204: t.Void() },
        detail: {
          tags,
          summary: "Revoke every API key of the account",
          description: `Irreversible; takes effect on the next request, including for the key making this call. ${secretOnly}`,
        },
      },
    )
    .get("/current", ({ tenant }) => getCurrentApiKey({ ctx: tenant, deps }), {
      auth: { mode: "keyOrJwt" },
      response: { 200: ApiKeyMetadata },
      detail: {
        tags,
        summary: "Metadata of the API key making this request",
        description: `Called with a JWT and no X-API-Key: 404 NOT_FOUND (no key in use). ${secretOnly}`,
      },
    })
    .put(
      "/:api_key_id",
      ({ tenant, params, body }) =>
        renameApiKey({ ctx: tenant, deps, input: { id: params.api_key_id, name: body.name } }),
      {
        auth: { mode: "keyOrJwt" },
        params: ApiKeyIdParams,
        body: ApiKeyUpdate,
        response: { 200: ApiKeyMetadata },
        detail: {
          tags,
          summary: "Rename an API key",
          description: `The key must be active and belong to the account, otherwise 404 NOT_FOUND. ${secretOnly}`,
        },
      },
    )
    .delete(
      "/:api_key_id",
      async ({ tenant, params, set }) => {
        await revokeApiKey({ ctx: tenant, deps, input: { id: params.api_key_id } });
        set.status = 204;
      },
      {
        auth: { mode: "keyOrJwt" },
        params: ApiKeyIdParams,
        response: { 204: t.Void() },
        detail: {
          tags,
          summary: "Revoke one API key",
          description:
            "Irreversible; the key stops authenticating on the next request in every process, other keys are " +
            `unaffected. Unknown, revoked or another account's key: 404 NOT_FOUND. ${secretOnly}`,
        },
      },
    );
}

export const apiKeysModule: ServiceModule = {
  name: "api-keys",
  routes: apiKeysRoutes,
};
