import type { Database } from "../../db/client";
import { latestInteractionsQuery } from "./queries";

export interface LatestInteraction {
  /** Internal product id (products.id), stable while the product exists. */
  productId: number;
  externalProductId: string;
  interactionType: string;
  value: number;
  occurredAt: Date;
}

/**
 * A user's latest interactions, newest first: one index range scan on (account_id, end_user_id,
 * occurred_at), for the recommender's request-time fold-in. Soft-deleted products are included (the caller
 * decides whether history on a deleted product still counts).
 */
export async function latestInteractions(
  database: Pick<Database, "db">,
  accountId: number,
  endUserId: number,
  limit = 50,
): Promise<LatestInteraction[]> {
  return latestInteractionsQuery(database.db, accountId, endUserId, limit);
}
