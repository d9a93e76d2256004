import { t } from "elysia";
import { JsonInteger, UNKNOWN_QUERY_IGNORED } from "../../http/schema-types";
import { MAX_INT32 } from "../../http/validation-issues";

/** Page sizes default to the specification's 100 ("other list limit", section 8). */
export const LISTING_DEFAULT_LIMIT = 100;
export const MAX_LIMIT = 1000;

export const FILTER_OPS = ["eq", "ne", "lt", "lte", "gt", "gte", "in", "nin", "contains"] as const;
export type FilterOp = (typeof FILTER_OPS)[number];

export const RecommendationGoal = t.Union(
  [t.Literal("user_engagement"), t.Literal("conversion"), t.Literal("revenue"), t.Literal("discovery")],
  {
    description: "What to optimise: engagement (default), conversion, revenue (price-weighted) or discovery.",
  },
);
export const ModelVariant = t.Union([t.Literal("standard"), t.Literal("diverse")], {
  description: "`diverse` re-ranks the result for variety across categories and taste factors (MMR).",
});
export const Strategy = t.Union(
  [t.Literal("hybrid"), t.Literal("content_based"), t.Literal("collab"), t.Literal("popularity")],
  { description: "Signal source; `hybrid` (default) blends collaborative, content and trending scores." },
);

export const FilterCondition = t.Object(
  {
    field: t.String({
      pattern: "^(category|price|brand|in_stock|rating|attributes\\.[^\\s]+)$",
      maxLength: 255,
      "x-expected": "category, price, brand, in_stock, rating or attributes.<key>",
      description: "category (eq matches sub-categories), price, brand, in_stock, rating or attributes.<key>",
    }),
    op: t.Union(
      FILTER_OPS.map((op) => t.Literal(op)),
      {
        description: "Comparison; in/nin take an array, contains a string (or a value for array attributes).",
      },
    ),
    value: t.Unknown({
      description: "Type must fit the field: number for price/rating, boolean for in_stock.",
    }),
  },
  { additionalProperties: false },
);

export const FilterGroup = t.Object(
  {
    logic: t.Optional(t.Union([t.Literal("and"), t.Literal("or")], { default: "and" })),
    filters: t.Array(FilterCondition, { maxItems: 50 }),
  },
  { additionalProperties: false, description: "Conditions combined with `logic` (default and)." },
);

export const QueryContext = t.Object(
  {
    page_type: t.Optional(t.Union([t.Literal("home"), t.Literal("product_detail"), t.Literal("cart")])),
    device: t.Optional(t.Union([t.Literal("mobile"), t.Literal("desktop"), t.Literal("tablet")])),
    source_external_product_id: t.Optional(
      t.String({ minLength: 1, maxLength: 255, description: "Blends in products similar to this one." }),
    ),
    location: t.Optional(t.String({ maxLength: 255, description: "Accepted; does not affect results yet." })),
    time_of_day: t.Optional(
      t.String({
        maxLength: 64,
        description:
          "Leans popularity towards what sells at that time of day (needs a trained model): night, morning, " +
          "afternoon or evening, an hour 0–23 or HH:MM in UTC, or an ISO 8601 date-time (its offset is " +
          "applied). Other values are ignored.",
      }),
    ),
  },
  { additionalProperties: false },
);

const ExternalUserId = t.String({ minLength: 1, maxLength: 255 });

export const PersonalizedQuery = t.Object(
  {
    external_user_id: ExternalUserId,
    recommendation_goal: t.Optional(RecommendationGoal),
    model_variant: t.Optional(ModelVariant),
    strategy: t.Optional(Strategy),
    include_explanation: t.Optional(t.Boolean()),
    limit: t.Optional(JsonInteger({ minimum: 1, maximum: MAX_LIMIT, default: LISTING_DEFAULT_LIMIT })),
    skip: t.Optional(JsonInteger({ minimum: 0, maximum: MAX_INT32, default: 0 })),
    context: t.Optional(QueryContext),
    filters: t.Optional(FilterGroup),
  },
  {
    additionalProperties: false,
    description: "Personalised query. Unknown fields (such as internal training-only fields) are rejected.",
  },
);
export type PersonalizedQuery = typeof PersonalizedQuery.static;
export type FilterGroup = typeof FilterGroup.static;

export const PresetBody = t.Object(
  {
    external_user_id: ExternalUserId,
    limit: t.Optional(JsonInteger({ minimum: 1, maximum: MAX_LIMIT })),
  },
  { additionalProperties: false },
);
export type PresetBody = typeof PresetBody.static;

export const RecommendationSource = t.Union([
  t.Literal("personalized"),
  t.Literal("collaborative"),
  t.Literal("content_based"),
  t.Literal("trending"),
  t.Literal("popular"),
  t.Literal("similar"),
  t.Literal("complementary"),
]);
export type RecommendationSource = typeof RecommendationSource.static;

export const RecommendationItem = t.Object({
  externalId: t.String(),
  name: t.String(),
  score: t.Number(),
  source: RecommendationSource,
  explanation: t.Optional(t.String()),
});
export type RecommendationItem = typeof RecommendationItem.static;

/** One ranking's answer before it is rendered: the page of items and how many were eligible in all. */
export interface RankedPage {
  items: RecommendationItem[];
  total: number;
}

export const RecommendationPage = t.Object(
  {
    items: t.Array(RecommendationItem),
    total: JsonInteger({ description: "Candidates available after filters (counted up to 10000)." }),
    skip: JsonInteger(),
    limit: JsonInteger(),
    recommendationId: t.String({
      format: "uuid",
      description:
        "Names this answer: send it as `recommendation_id` with the click, cart or purchase of one of its items " +
        "so that online metrics credit this answer.",
    }),
    experiment: t.Optional(
      t.Object(
        {
          id: JsonInteger(),
          variant: t.String(),
          modelVersion: t.Union([JsonInteger(), t.Null()], {
            description:
              "Version of the model that ranked this answer (the arm's pinned `model_version`, else the " +
              "published model's); null when the account has no model to rank with.",
          }),
        },
        {
          description:
            "The experiment and arm that served this answer, when one runs on the endpoint and the request " +
            "was assigned to an arm.",
        },
      ),
    ),
  },
  { description: "Pagination envelope of recommended products." },
);
export type RecommendationPage = typeof RecommendationPage.static;
/** An answer's body before it is sent: every sending names it with a new `recommendationId`. */
export type RankedBody = Omit<RecommendationPage, "recommendationId">;

/** Paging of the category and similar listings (the use cases apply the same defaults). */
const ListingPageQuery = {
  external_user_id: t.Optional(
    t.String({
      minLength: 1,
      maxLength: 255,
      description:
        "The end user the listing is shown to, when known: only assigns them to the arm of an A/B experiment " +
        "running on this endpoint (the listing itself is the same for everyone). Without it the listing is " +
        "served as usual, outside any experiment.",
    }),
  ),
  skip: t.Optional(t.Integer({ minimum: 0, default: 0, description: "Offset, default 0." })),
  limit: t.Optional(
    t.Integer({
      minimum: 1,
      maximum: MAX_LIMIT,
      default: LISTING_DEFAULT_LIMIT,
      description: `1..${MAX_LIMIT}, default ${LISTING_DEFAULT_LIMIT}.`,
    }),
  ),
};

export const CategoryParams = t.Object({ category: t.String({ minLength: 1, maxLength: 255 }) });
export const CategoryQuery = t.Object(
  {
    sort_by: t.Optional(
      t.Union(
        [t.Literal("popularity"), t.Literal("rating"), t.Literal("price_asc"), t.Literal("price_desc")],
        {
          default: "popularity",
        },
      ),
    ),
    ...ListingPageQuery,
  },
  UNKNOWN_QUERY_IGNORED,
);

export const SimilarParams = t.Object({ external_product_id: t.String({ minLength: 1, maxLength: 255 }) });
export const SimilarQuery = t.Object(
  {
    ...ListingPageQuery,
    include_explanation: t.Optional(t.BooleanString()),
    explanation_level: t.Optional(t.Union([t.Literal("simple"), t.Literal("detailed")])),
  },
  UNKNOWN_QUERY_IGNORED,
);

export const ProductPageQuery = t.Object(
  { current_product_id: t.String({ minLength: 1, maxLength: 255 }) },
  UNKNOWN_QUERY_IGNORED,
);
export const CartQuery = t.Object(
  {
    cart_items: t.Optional(t.Array(t.String({ minLength: 1, maxLength: 255 }), { maxItems: 200 })),
  },
  UNKNOWN_QUERY_IGNORED,
);
export const CheckoutQuery = t.Object(
  { order_value: t.Optional(t.Numeric({ exclusiveMinimum: 0 })) },
  UNKNOWN_QUERY_IGNORED,
);
