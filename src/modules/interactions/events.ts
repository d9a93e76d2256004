/**
 * In-process notice that an end user has new interactions (single create or a bulk chunk), so the
 * recommender can refresh that user's fold-in vector or drop its cached history. One event per end user per
 * committed write; listeners run synchronously after the commit, must be cheap and must not throw.
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

type Listener = (event: InteractionsRecorded) => void;
const listeners = new Set<Listener>();

/** Subscribes; returns the unsubscribe function. */
export function onInteractionRecorded(listener: Listener): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

export function emitInteractionRecorded(event: InteractionsRecorded): void {
  for (const listener of listeners) {
    try {
      listener(event);
    } catch {
      // A faulty cache listener must not fail a write that already committed.
    }
  }
}
