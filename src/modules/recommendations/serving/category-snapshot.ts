/**
 * Category listings served from the account's snapshot: the cached, sorted item list of the category (per
 * sort key, rebuilt when the snapshot's items change) merged with the few products created since training.
 * Popularity and rating are the trained ones (new products: none yet, so unrated and least popular).
 */

import { inCategory } from "../../../engine/ranking/catalogue";
import type { RankedPage, RecommendationItem } from "../schemas";
import type { ExtraProduct } from "./catalogue-extras";
import type { ItemTable } from "./item-table";
import { type CategorySort, categoryOrder } from "./serving-cache";

interface Entry {
  externalId: string;
  name: string;
  popularity: number;
  rating: number;
  price: number;
  /** Tie-break: snapshot items by dense index (creation order), then the newer products. */
  order: number;
}

export function listCategoryFromSnapshot(
  table: ItemTable,
  extras: readonly ExtraProduct[],
  category: string,
  sortBy: CategorySort,
  skip: number,
  limit: number,
): RankedPage {
  const order = categoryOrder(table, category, sortBy);
  const fromTable = (i: number): Entry => ({
    externalId: table.externalIds[i]!,
    name: table.names[i]!,
    popularity: table.popularity[i]!,
    rating: table.rating[i]!,
    price: table.prices[i]!,
    order: i,
  });
  const newer: Entry[] = extras
    .filter((p) => inCategory(p.category, category))
    .map((p, j) => ({
      externalId: p.externalId,
      name: p.name,
      popularity: 0,
      rating: Number.NaN,
      price: p.price,
      order: table.size + j,
    }))
    .sort((a, b) => compare(sortBy, a, b));
  const want = skip + limit;
  const page: Entry[] = [];
  let a = 0;
  let b = 0;
  while (a + b < want && (a < order.length || b < newer.length)) {
    const left = a < order.length ? fromTable(order[a]!) : undefined;
    const right = newer[b];
    const takeLeft = right === undefined || (left !== undefined && compare(sortBy, left, right) <= 0);
    const next = takeLeft ? left! : right!;
    if (takeLeft) a++;
    else b++;
    if (a + b > skip) page.push(next);
  }
  const items = page.map((e): RecommendationItem => {
    const rating = Number.isNaN(e.rating) ? 0 : e.rating;
    const score = sortBy === "rating" ? rating : sortBy === "popularity" ? e.popularity : e.price;
    return {
      externalId: e.externalId,
      name: e.name,
      score: Math.round(score * 1e6) / 1e6,
      source: "popular",
    };
  });
  return { items, total: order.length + newer.length };
}

function compare(sortBy: CategorySort, a: Entry, b: Entry): number {
  const rated = (e: Entry) => (Number.isNaN(e.rating) ? Number.NEGATIVE_INFINITY : e.rating);
  let c: number;
  switch (sortBy) {
    case "popularity":
      c = b.popularity - a.popularity;
      break;
    case "rating":
      c = rated(b) - rated(a) || b.popularity - a.popularity;
      break;
    case "price_asc":
      c = a.price - b.price;
      break;
    default:
      c = b.price - a.price;
  }
  return Number.isNaN(c) || c === 0 ? a.order - b.order : c;
}
