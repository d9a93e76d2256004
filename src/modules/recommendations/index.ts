import { Elysia, t } from "elysia";
import type { AppDeps } from "../../app-deps";
import { authPlugin } from "../../http/auth";
import { ELYSIA_CONFIG } from "../../http/kernel";
import type { ServiceModule } from "../module";
import { preRenderedJson } from "./respond";
import {
  CartQuery,
  CategoryParams,
  CategoryQuery,
  CheckoutQuery,
  PersonalizedQuery,
  PresetBody,
  ProductPageQuery,
  RecommendationPage,
  SimilarParams,
  SimilarQuery,
} from "./schemas";
import { listCategory } from "./use-cases/list-category";
import { listSimilar } from "./use-cases/list-similar";
import { queryPersonalized } from "./use-cases/query-personalized";
import { recommendPreset } from "./use-cases/recommend-preset";

const tags = ["Recommendations"];
const auth = { mode: "keyOrJwt", scope: "recommendations:read" } as const;
const response = { 200: RecommendationPage };

const PRESET_NOTE =
  " Leaves out soft-deleted products and everything the end user already interacted with (purchases of any " +
  "age included); an end user unknown to the account is served as a new user. Without `limit` the suggested " +
  "page size applies.";

/** Path segments arrive percent-encoded when sent as `electronics%2Fphones`; plain slashes use the wildcard route. */
const decodeCategory = (raw: string): string => {
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
};

/** Both category routes' input: the path as given (plain or encoded) and the listing's query. */
const categoryInput = (raw: string, query: typeof CategoryQuery.static) => ({
  category: decodeCategory(raw),
  sortBy: query.sort_by,
  skip: query.skip,
  limit: query.limit,
  externalUserId: query.external_user_id,
});

const JSON_CONTENT_TYPE = "application/json;charset=utf-8";

type ResponseSet = { headers: Record<string, string | number>; status?: number | string };

/**
 * A page's body goes out as the JSON text made when it was rendered (see respond.ts), in a Response carrying
 * the status and headers set for the request. Returned from the handler, it skips Elysia's response check:
 * `renderPage` checked the body against the response schema once, when the page was made, so a page served
 * again from the page cache is not checked again for every sending. The headers move from `set` into it:
 * with none left there, Elysia sends this Response as it is instead of copying it into another one to merge
 * them (which made each response 2.3 times as long to produce, measured in-process). A body without such
 * text is returned as it is, for Elysia to check and send.
 */
function sendPage(
  result: RecommendationPage | Promise<RecommendationPage>,
  set: ResponseSet,
): RecommendationPage | Response | Promise<RecommendationPage> {
  if (!(result instanceof Promise)) return pageResponse(result, set);
  // Elysia's handler type takes a promise of a body or of a Response, not of either; it tells them apart
  // when the promise settles.
  return result.then((page) => pageResponse(page, set)) as Promise<RecommendationPage>;
}

function pageResponse(page: RecommendationPage, set: ResponseSet): RecommendationPage | Response {
  const json = preRenderedJson(page);
  if (json === undefined) return page;
  const headers: Record<string, string> = {};
  for (const name in set.headers) headers[name] = String(set.headers[name]);
  headers["content-type"] = JSON_CONTENT_TYPE;
  set.headers = {};
  return new Response(json, { status: typeof set.status === "number" ? set.status : 200, headers });
}

function recommendationsRoutes(deps: AppDeps) {
  const categoryDetail = {
    tags,
    summary: "Products of a category",
    description:
      "Live products of the category and all its sub-categories (`electronics` includes `electronics/phones`; " +
      "give the path plainly or encoded as `electronics%2Fphones`), sorted by `popularity` (7-day-decayed " +
      "interaction weight; default), `rating` (mean RATING value, unrated last), `price_asc` or `price_desc`. " +
      "Works without a trained model; no end-user history filter applies. `score` is the sort value.",
  };
  return new Elysia({ ...ELYSIA_CONFIG, name: "recommendations", prefix: "/api/v1/recommendations" })
    .use(authPlugin(deps))
    .post(
      "/personalized/query",
      ({ tenant, body, set }) => sendPage(queryPersonalized({ ctx: tenant, deps, input: body }), set),
      {
        auth,
        body: PersonalizedQuery,
        response,
        detail: {
          tags,
          summary: "Personalised recommendations",
          description:
            "Ranks the catalogue for one end user. The user's taste vector is folded in from their latest 200 " +
            "interactions at request time, so an interaction recorded a moment ago changes the next answer. " +
            "`strategy`: hybrid (default; collaborative + content + trending, weighted by `recommendation_goal`: " +
            "user_engagement, conversion (adds bought-together), revenue (relevance × price), discovery " +
            "(long tail)), content_based, collab, popularity. `model_variant: diverse` re-ranks for variety " +
            "across categories and taste (MMR). `context.source_external_product_id` blends in products similar " +
            "to it; `time_of_day` (daypart name, UTC hour or ISO date-time) leans the popularity signal towards " +
            "what sells at that time of day (with a trained model); `location`, `device` and `page_type` are " +
            "accepted but do not change the ranking. `filters` ({logic: and|or, filters: [{field, op, value}]}; fields category (eq includes " +
            "sub-categories), price, brand, in_stock, rating, attributes.<key>; ops eq, ne, lt, lte, gt, gte, in, " +
            "nin, contains) hold on every item; a bad field, op or value type is a 422. Products the user already " +
            "interacted with (any type, dislikes included) and soft-deleted products never appear. Without a " +
            "model or history: popularity within the user's preferred categories and price range, then the rest " +
            "by popularity, then catalogue order — a full page, never an error; an end user unknown to the " +
            "account is served that way (not a 404). `limit` defaults to 20; `total` counts every eligible " +
            "product after filters and exclusions. Unknown body fields (e.g. training-only target scores or " +
            "group ids) are a 422.",
        },
      },
    )
    .get(
      "/category/:category",
      ({ tenant, params, query, set }) =>
        sendPage(listCategory({ ctx: tenant, deps, input: categoryInput(params.category, query) }), set),
      { auth, params: CategoryParams, query: CategoryQuery, response, detail: categoryDetail },
    )
    .get(
      "/category/*",
      ({ tenant, params, query, set }) =>
        sendPage(listCategory({ ctx: tenant, deps, input: categoryInput(params["*"], query) }), set),
      {
        auth,
        params: t.Object({ "*": t.String({ minLength: 1, maxLength: 255 }) }),
        query: CategoryQuery,
        response,
        detail: { ...categoryDetail, hide: true },
      },
    )
    .get(
      "/products/external/:external_product_id/similar",
      ({ tenant, params, query, set }) =>
        sendPage(
          listSimilar({
            ctx: tenant,
            deps,
            input: {
              externalProductId: params.external_product_id,
              skip: query.skip,
              limit: query.limit,
              includeExplanation: query.include_explanation,
              explanationLevel: query.explanation_level,
              externalUserId: query.external_user_id,
            },
          }),
          set,
        ),
      {
        auth,
        params: SimilarParams,
        query: SimilarQuery,
        response,
        detail: {
          tags,
          summary: "Products similar to a product",
          description:
            "Collaborative and content similarity from the trained model (category and brand closeness without " +
            "one); the product itself is excluded and no end-user history filter applies. `include_explanation` " +
            "adds a sentence (`explanation_level=detailed` appends the signal and score; a publishable key gets " +
            "a generic reason at any level). Unknown or deleted " +
            "products answer 404. Defaults: limit 100, skip 0.",
        },
      },
    )
    .post(
      "/ecommerce/homepage",
      ({ tenant, body, set }) =>
        sendPage(recommendPreset({ ctx: tenant, deps, input: { preset: "homepage", body } }), set),
      {
        auth,
        body: PresetBody,
        response,
        detail: {
          tags,
          summary: "Homepage preset",
          description: `Relevance-focused, in-stock products only, no explanations; default limit 12.${PRESET_NOTE}`,
        },
      },
    )
    .post(
      "/ecommerce/product-page",
      ({ tenant, body, query, set }) =>
        sendPage(
          recommendPreset({
            ctx: tenant,
            deps,
            input: { preset: "product-page", body, currentProductId: query.current_product_id },
          }),
          set,
        ),
      {
        auth,
        body: PresetBody,
        query: ProductPageQuery,
        response,
        detail: {
          tags,
          summary: "Product-page preset",
          description:
            "Engagement-focused: products similar to `current_product_id` (required; 404 when unknown), which " +
            `is itself excluded; with explanations; default limit 8.${PRESET_NOTE}`,
        },
      },
    )
    .post(
      "/ecommerce/cart",
      ({ tenant, body, query, set }) =>
        sendPage(
          recommendPreset({
            ctx: tenant,
            deps,
            input: { preset: "cart", body, cartItems: query.cart_items },
          }),
          set,
        ),
      {
        auth,
        body: PresetBody,
        query: CartQuery,
        response,
        detail: {
          tags,
          summary: "Cart preset",
          description:
            "Complementary products (often bought together with the cart, from co-occurrence), in stock, with " +
            "explanations; the `cart_items` (optional, repeated once per product external id; unknown ids " +
            `ignored) are excluded; default limit 6.${PRESET_NOTE}`,
        },
      },
    )
    .post(
      "/ecommerce/checkout",
      ({ tenant, body, query, set }) =>
        sendPage(
          recommendPreset({
            ctx: tenant,
            deps,
            input: { preset: "checkout", body, orderValue: query.order_value },
          }),
          set,
        ),
      {
        auth,
        body: PresetBody,
        query: CheckoutQuery,
        response,
        detail: {
          tags,
          summary: "Checkout preset",
          description:
            "Quick-add products: popular, in stock, bought together with what the user recently carted or " +
            "bought, each priced at most 30% of `order_value` (optional; without it no cap applies); with " +
            `explanations; default limit 4.${PRESET_NOTE}`,
        },
      },
    );
}

export const recommendationsModule: ServiceModule = {
  name: "recommendations",
  routes: recommendationsRoutes,
};
