/**
 * The announcement that an account's published model changed, sent with NOTIFY on one channel so every
 * process serving the account swaps its snapshot.
 */

export const MODEL_PUBLISHED_CHANNEL = "model_published";

export interface ModelPublishedEvent {
  accountId: number;
  /** null: the account's models were removed (e.g. sandbox reset); drop the snapshot. */
  modelId: number | null;
}

/** The event a NOTIFY payload carries; undefined for a payload that is not one. */
export function parseEvent(payload: string): ModelPublishedEvent | undefined {
  try {
    const value = JSON.parse(payload) as Partial<ModelPublishedEvent>;
    if (typeof value.accountId !== "number") return undefined;
    return { accountId: value.accountId, modelId: typeof value.modelId === "number" ? value.modelId : null };
  } catch {
    return undefined;
  }
}
