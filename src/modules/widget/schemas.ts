import { t } from "elysia";

export const MAX_CARDS = 100;

export const ProductCardsQuery = t.Object(
  {
    ids: t.Array(t.String({ minLength: 1, maxLength: 255 }), {
      minItems: 1,
      maxItems: MAX_CARDS,
      description: "External product ids, as returned by a recommendation answer (repeat the parameter).",
    }),
  },
  { additionalProperties: false },
);

export const ProductCard = t.Object({
  externalId: t.String(),
  name: t.String(),
  price: t.Number(),
  imageUrl: t.Union([t.String(), t.Null()], { description: "The product's `image_url` attribute." }),
  url: t.Union([t.String(), t.Null()], {
    description: "The product's `url` attribute (its page in the shop).",
  }),
});
export type ProductCard = typeof ProductCard.static;

export const ProductCards = t.Object(
  { items: t.Array(ProductCard) },
  { description: "The live products asked for, in the order asked; unknown and deleted ids are left out." },
);
export type ProductCards = typeof ProductCards.static;
