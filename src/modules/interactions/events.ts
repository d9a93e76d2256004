/**
 * In-process notice that an end user has new interactions (single create or a bulk chunk), so the
 * recommender can refresh that user's fold-in vector or drop its cached history. One event per end user per
 * committed write, sent on the app's `interactionsRecorded` bus (src/app-events.ts).
 */
export interface RecordedInteraction {
  productId: number;
  externalProductId: string;
  interactionType: string;
  value: number;
  occurredAt: Date;
  /** The answer the client credits it to (its `recommendation_id`), if sent. */
  recommendationId?: string;
  /** A PURCHASE's revenue: its value when sent, else the product's price; 0 for other types. */
  revenue: number;
}

export interface InteractionsRecorded {
  accountId: number;
  endUserId: number;
  externalUserId: string;
  interactions: readonly RecordedInteraction[];
}
