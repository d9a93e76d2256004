import { t } from "elysia";
import { Amount, UNKNOWN_QUERY_IGNORED } from "../../http/schema-types";
import { PageQuery } from "../products/schemas";

export const INTERACTION_TYPES = [
  "VIEW",
  "CLICK",
  "CART",
  "PURCHASE",
  "RATING",
  "LIKE",
  "DISLIKE",
  "SEARCH",
] as const;
export type InteractionType = (typeof INTERACTION_TYPES)[number];

// JSON Schema patterns have no case-insensitive flag, so each letter becomes a [Xx] class.
const anyCase = (word: string) => [...word].map((c) => `[${c}${c.toLowerCase()}]`).join("");
const TYPE_PATTERN = `^(${INTERACTION_TYPES.map(anyCase).join("|")})$`;

const fields = {
  external_user_id: t.String({
    minLength: 1,
    maxLength: 255,
    description: "The end user; an unknown id creates that end user.",
  }),
  external_product_id: t.String({
    minLength: 1,
    maxLength: 255,
    description: "A live product of the account; unknown or deleted products are refused.",
  }),
  interaction_type: t.String({
    pattern: TYPE_PATTERN,
    "x-expected": `one of ${INTERACTION_TYPES.join(", ")} (any letter case)`,
    description: `${INTERACTION_TYPES.join(", ")}; any letter case (stored upper-case).`,
  }),
  timestamp: t.Optional(
    t.String({
      format: "date-time",
      description: "ISO 8601 date-time; default now; at most 5 minutes in the future.",
    }),
  ),
  query: t.Optional(t.String({ maxLength: 1000, description: "The search text of a SEARCH interaction." })),
  recommendation_id: t.Optional(
    t.String({
      pattern: "^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$",
      description:
        "The `recommendationId` of the answer that showed the product: a CLICK, CART or PURCHASE is credited " +
        "to it. Without one it is credited to the latest answer that showed the product to this end user " +
        "within 24 hours, if any.",
    }),
  ),
};

export const InteractionCreate = t.Object(
  {
    ...fields,
    value: t.Optional(
      // Defaulted to 1 where it is stored, not here: a PURCHASE sent without a value is credited with the
      // product's price (attribution), which a schema default would hide.
      Amount({
        description:
          "Greater than 0 and at most 10^12; default 1; the rating for RATING; a PURCHASE's revenue " +
          "(default: the price).",
      }),
    ),
  },
  {
    additionalProperties: false,
    description: "An interaction. Bulk ingestion takes the same shape in its `interactions` array.",
  },
);
export type InteractionCreate = typeof InteractionCreate.static;

/** The bulk-ingestion record: the single create's shape, `value` defaulting to 1 in both. */
export const InteractionRecord = InteractionCreate;
export type InteractionRecord = InteractionCreate;

export const Interaction = t.Object({
  id: t.Integer(),
  external_user_id: t.String(),
  external_product_id: t.String(),
  interaction_type: t.String(),
  value: t.Number(),
  timestamp: t.String({ format: "date-time" }),
  query: t.Optional(t.String()),
});
export type Interaction = typeof Interaction.static;

export const InteractionListQuery = t.Object(PageQuery, UNKNOWN_QUERY_IGNORED);

export const InteractionPage = t.Object({
  items: t.Array(Interaction),
  total: t.Integer(),
  skip: t.Integer(),
  limit: t.Integer(),
});
