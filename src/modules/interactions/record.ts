import type { InteractionRow } from "./queries";
import type { Interaction } from "./schemas";

export function toInteraction(row: InteractionRow): Interaction {
  return {
    id: row.id,
    external_user_id: row.externalUserId,
    external_product_id: row.externalProductId,
    interaction_type: row.interactionType,
    value: row.value,
    timestamp: row.occurredAt.toISOString(),
    ...(row.query !== null ? { query: row.query } : {}),
  };
}
