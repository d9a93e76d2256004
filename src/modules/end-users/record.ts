import type { endUsers } from "../../db/schema";
import type { EndUser } from "./schemas";

export function toEndUser(row: typeof endUsers.$inferSelect): EndUser {
  return {
    externalId: row.externalId,
    preferredCategories: row.preferredCategories,
    priceRangeMin: row.priceRangeMin,
    priceRangeMax: row.priceRangeMax,
    attributes: row.attributes,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}
