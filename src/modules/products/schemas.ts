import { t } from "elysia";
import { Amount, Attributes, UNKNOWN_QUERY_IGNORED } from "../../http/schema-types";

const externalId = t.String({
  minLength: 1,
  maxLength: 255,
  description: "The shop's own identifier of the product, unique per account.",
});

const productFields = {
  name: t.String({ minLength: 1, maxLength: 500 }),
  description: t.Optional(t.String({ maxLength: 20_000 })),
  price: Amount({ description: "Greater than 0, at most 10^12." }),
  category: t.String({
    minLength: 1,
    maxLength: 255,
    description: 'Slash-separated path such as "electronics/phones"; listings include sub-categories.',
  }),
  brand: t.Optional(t.String({ maxLength: 500 })),
  inStock: t.Optional(t.Boolean({ description: "Defaults to true." })),
  attributes: t.Optional(Attributes("Free key/value pairs (colour, size, rating…).")),
};

export const ProductCreate = t.Object(
  { externalId, ...productFields },
  {
    additionalProperties: false,
    description: "A product. Bulk ingestion takes the same shape in its `products` array.",
  },
);
export type ProductCreate = typeof ProductCreate.static;

export const ProductUpdate = t.Object(productFields, {
  additionalProperties: false,
  description: "Full replacement of the product's fields; omitted optional fields go back to their defaults.",
});
export type ProductUpdate = typeof ProductUpdate.static;

export const ProductPatch = t.Object(
  {
    name: t.Optional(productFields.name),
    description: t.Optional(t.Union([productFields.description, t.Null()])),
    price: t.Optional(productFields.price),
    category: t.Optional(productFields.category),
    brand: t.Optional(t.Union([productFields.brand, t.Null()])),
    inStock: t.Optional(t.Boolean()),
    attributes: t.Optional(Attributes("Replaces the stored attributes as a whole.")),
  },
  {
    additionalProperties: false,
    description:
      "Partial update: only the fields given change; omitted fields keep their values. `null` clears " +
      "`description` or `brand`.",
  },
);
export type ProductPatch = typeof ProductPatch.static;

export const Product = t.Object({
  externalId: t.String(),
  name: t.String(),
  description: t.Union([t.String(), t.Null()]),
  price: t.Number(),
  category: t.String(),
  brand: t.Union([t.String(), t.Null()]),
  inStock: t.Boolean(),
  attributes: t.Record(t.String(), t.Unknown()),
  createdAt: t.String({ format: "date-time" }),
  updatedAt: t.String({ format: "date-time" }),
});
export type Product = typeof Product.static;

export const PageQuery = {
  skip: t.Optional(t.Integer({ minimum: 0, default: 0, description: "Offset, default 0." })),
  limit: t.Optional(
    t.Integer({ minimum: 1, maximum: 1000, default: 100, description: "1..1000, default 100." }),
  ),
};

export const ProductListQuery = t.Object(
  {
    category: t.Optional(
      t.String({ minLength: 1, maxLength: 255, description: "Matches the category and its sub-categories." }),
    ),
    ...PageQuery,
  },
  UNKNOWN_QUERY_IGNORED,
);

export const ProductPage = t.Object({
  items: t.Array(Product),
  total: t.Integer(),
  skip: t.Integer(),
  limit: t.Integer(),
});

export const ProductPath = t.Object({ external_id: t.String({ minLength: 1, maxLength: 255 }) });
