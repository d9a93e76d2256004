import { Elysia, t } from "elysia";
import type { AppDeps } from "../../app-deps";
import { authPlugin } from "../../http/auth";
import { ELYSIA_CONFIG } from "../../http/kernel";
import type { ServiceModule } from "../module";
import { recordUsage } from "../usage/record";
import { createProduct } from "./create";
import { deleteProduct } from "./delete";
import { getProduct } from "./get";
import { listProducts } from "./list";
import { patchProduct } from "./patch";
import {
  Product,
  ProductCreate,
  ProductListQuery,
  ProductPage,
  ProductPatch,
  ProductPath,
  ProductUpdate,
} from "./schemas";
import { updateProduct } from "./update";

const tags = ["Products"];

function productsRoutes(deps: AppDeps) {
  return new Elysia({ ...ELYSIA_CONFIG, name: "products", prefix: "/api/v1/products" })
    .use(authPlugin(deps))
    .post(
      "/",
      async ({ tenant, body, set }) => {
        const product = await createProduct({ ctx: tenant, deps, input: body });
        recordUsage(deps, tenant.accountId, { ingestedRecords: 1 });
        set.status = 201;
        return product;
      },
      {
        auth: { mode: "keyOrJwt" },
        body: ProductCreate,
        response: { 201: Product },
        detail: {
          tags,
          summary: "Create a product",
          description:
            "Adds a product to the account's catalogue. An externalId that already names a live product answers " +
            "409 CONFLICT; one that names a soft-deleted product revives it with the new fields. A catalogue at " +
            "its plan's maxProducts answers 429 PLAN_LIMIT_EXCEEDED.",
        },
      },
    )
    .get("/", ({ tenant, query }) => listProducts({ ctx: tenant, deps, input: query }), {
      auth: { mode: "keyOrJwt" },
      query: ProductListQuery,
      response: { 200: ProductPage },
      detail: {
        tags,
        summary: "List products",
        description:
          "Live products in creation order, as a pagination envelope. `category=a/b` lists `a/b` and every " +
          "sub-category `a/b/...`.",
      },
    })
    .get(
      "/external/:external_id",
      ({ tenant, params }) => getProduct({ ctx: tenant, deps, input: { externalId: params.external_id } }),
      {
        auth: { mode: "keyOrJwt" },
        params: ProductPath,
        response: { 200: Product },
        detail: {
          tags,
          summary: "Get a product by external id",
          description:
            "URL-encode external ids that contain reserved characters. Deleted products answer 404.",
        },
      },
    )
    .put(
      "/external/:external_id",
      ({ tenant, params, body }) =>
        updateProduct({ ctx: tenant, deps, input: { externalId: params.external_id, product: body } }),
      {
        auth: { mode: "keyOrJwt" },
        params: ProductPath,
        body: ProductUpdate,
        response: { 200: Product },
        detail: {
          tags,
          summary: "Replace a product",
          description:
            "Full replacement: every required field must be sent, and omitted optional fields return to their " +
            "defaults (description and brand null, inStock true, attributes empty). To change some fields " +
            "only, use PATCH. Deleted products answer 404.",
        },
      },
    )
    .patch(
      "/external/:external_id",
      ({ tenant, params, body }) =>
        patchProduct({ ctx: tenant, deps, input: { externalId: params.external_id, changes: body } }),
      {
        auth: { mode: "keyOrJwt" },
        params: ProductPath,
        body: ProductPatch,
        response: { 200: Product },
        detail: {
          tags,
          summary: "Update some fields of a product",
          description:
            'Partial update: only the fields in the body change (e.g. `{"price": 19.9}`); omitted fields, ' +
            "brand and attributes included, keep their values, and `null` clears description or brand. " +
            "`attributes`, when given, replaces the stored object. Deleted products answer 404.",
        },
      },
    )
    .delete(
      "/external/:external_id",
      async ({ tenant, params, set }) => {
        await deleteProduct({ ctx: tenant, deps, input: { externalId: params.external_id } });
        set.status = 204;
      },
      {
        auth: { mode: "keyOrJwt" },
        params: ProductPath,
        response: { 204: t.Void({ description: "Soft-deleted" }) },
        detail: {
          tags,
          summary: "Delete a product (soft delete)",
          description:
            "The product answers 404 afterwards, leaves listings and is never recommended; creating the same " +
            "externalId again revives it.",
        },
      },
    );
}

export const productsModule: ServiceModule = {
  name: "products",
  routes: productsRoutes,
};
