import { t } from "elysia";
import { Attributes, MAX_AMOUNT, UNKNOWN_QUERY_IGNORED } from "../../http/schema-types";
import { Interaction } from "../interactions/schemas";
import { PageQuery } from "../products/schemas";

export const EndUserCreate = t.Object(
  {
    externalId: t.String({
      minLength: 1,
      maxLength: 255,
      description: "The shop's own identifier of the end user, unique per account.",
    }),
    preferredCategories: t.Optional(t.Array(t.String({ minLength: 1, maxLength: 255 }), { maxItems: 100 })),
    priceRangeMin: t.Optional(t.Number({ minimum: 0, maximum: MAX_AMOUNT })),
    priceRangeMax: t.Optional(t.Number({ minimum: 0, maximum: MAX_AMOUNT })),
    attributes: t.Optional(Attributes("Free key/value pairs.")),
  },
  {
    additionalProperties: false,
    description: "An end user. Bulk ingestion takes the same shape in its `users` array.",
  },
);
export type EndUserCreate = typeof EndUserCreate.static;

export const EndUserPatch = t.Object(
  {
    preferredCategories: t.Optional(EndUserCreate.properties.preferredCategories),
    priceRangeMin: t.Optional(
      t.Union([t.Number({ minimum: 0, maximum: MAX_AMOUNT }), t.Null()], { description: "null clears it" }),
    ),
    priceRangeMax: t.Optional(
      t.Union([t.Number({ minimum: 0, maximum: MAX_AMOUNT }), t.Null()], { description: "null clears it" }),
    ),
    attributes: t.Optional(Attributes("Replaces the stored attributes as a whole.")),
  },
  {
    additionalProperties: false,
    description:
      "Partial update of the profile: only the fields given change; `null` clears a price bound. " +
      "`preferredCategories` and `attributes`, when given, replace the stored values.",
  },
);
export type EndUserPatch = typeof EndUserPatch.static;

export const EndUser = t.Object({
  externalId: t.String(),
  preferredCategories: t.Array(t.String()),
  priceRangeMin: t.Union([t.Number(), t.Null()]),
  priceRangeMax: t.Union([t.Number(), t.Null()]),
  attributes: t.Record(t.String(), t.Unknown()),
  createdAt: t.String({ format: "date-time" }),
  updatedAt: t.String({ format: "date-time" }),
});
export type EndUser = typeof EndUser.static;

export const EndUserListQuery = t.Object(PageQuery, UNKNOWN_QUERY_IGNORED);

export const EndUserPage = t.Object({
  items: t.Array(EndUser),
  total: t.Integer(),
  skip: t.Integer(),
  limit: t.Integer(),
});

export const EndUserPath = t.Object({ external_user_id: t.String({ minLength: 1, maxLength: 255 }) });

export const ErasureResult = t.Object({
  externalId: t.String(),
  erased: t.Literal(true),
  deleted: t.Object({
    interactions: t.Integer(),
    searches: t.Integer(),
    recommendations: t.Integer(),
    orders: t.Integer(),
    attributions: t.Integer({
      description: "Clicks, carts and purchases of theirs credited to recommendation answers.",
    }),
  }),
  erasedAt: t.String({ format: "date-time" }),
});
export type ErasureResult = typeof ErasureResult.static;

export const ExportedSearch = t.Object({
  query: t.Union([t.String(), t.Null()]),
  external_product_id: t.Union([t.String(), t.Null()]),
  timestamp: t.String({ format: "date-time" }),
});

export const ExportedOrder = t.Object({
  external_product_id: t.Union([t.String(), t.Null()]),
  quantity: t.Number(),
  unit_price: t.Number(),
  timestamp: t.String({ format: "date-time" }),
});

export const ExportedRecommendation = t.Object({
  recommendation_id: t.Union([t.String({ format: "uuid" }), t.Null()], {
    description: "The answer's `recommendationId` (null for answers logged before answers carried one).",
  }),
  endpoint: t.String(),
  items: t.Array(t.String(), { description: "External ids of the recommended products, in order." }),
  timestamp: t.String({ format: "date-time" }),
});

export const ExportedAttribution = t.Object(
  {
    recommendation_id: t.String({ format: "uuid" }),
    external_product_id: t.Union([t.String(), t.Null()]),
    position: t.Integer({ description: "0-based place of the product in the answer." }),
    interaction_type: t.String(),
    revenue: t.Number({ description: "A purchase's credited revenue; 0 for clicks and carts." }),
    endpoint: t.String(),
    timestamp: t.String({ format: "date-time", description: "When the interaction happened." }),
  },
  { description: "A click, cart or purchase of theirs credited to a recommendation answer." },
);

export const EndUserExport = t.Object({
  endUser: EndUser,
  interactions: t.Array(Interaction),
  searches: t.Array(ExportedSearch),
  recommendations: t.Array(ExportedRecommendation),
  orders: t.Array(ExportedOrder),
  attributions: t.Array(ExportedAttribution),
  exportedAt: t.String({ format: "date-time" }),
});
export type EndUserExport = typeof EndUserExport.static;
