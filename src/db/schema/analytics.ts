import { sql } from "drizzle-orm";
import {
  bigint,
  doublePrecision,
  index,
  integer,
  pgTable,
  text,
  uniqueIndex,
  uuid,
} from "drizzle-orm/pg-core";
import { createdAt, timestamptz } from "./columns";

/**
 * A click, cart or purchase credited to the recommendation answer that showed the product (see
 * modules/analytics/attribution-queue.ts). The answer's grouping (endpoint, strategy, variant, experiment
 * arm, day shown) is copied from its log row, so that erasing an end user can subtract exactly what their
 * attributions added to the daily aggregates even after the log rows are gone. No foreign keys: rows are
 * written in batches off the request path, only for end users that exist, and deleted with their end user.
 */
export const recommendationAttributions = pgTable(
  "recommendation_attributions",
  {
    accountId: integer("account_id").notNull(),
    /** The end user who clicked, carted or bought. */
    endUserId: bigint("end_user_id", { mode: "number" }).notNull(),
    recommendationId: uuid("recommendation_id").notNull(),
    productId: bigint("product_id", { mode: "number" }).notNull(),
    /** 0-based place of the product in the answer's items. */
    position: integer("position").notNull(),
    interactionType: text("interaction_type").notNull(),
    /** PURCHASE: its value, or the product's price when none was sent; 0 otherwise. */
    revenue: doublePrecision("revenue").notNull(),
    endpoint: text("endpoint").notNull(),
    strategy: text("strategy"),
    modelVariant: text("model_variant"),
    experimentId: integer("experiment_id"),
    experimentArm: text("experiment_arm"),
    /** When the answer was logged (its impressions count on that day). */
    shownAt: timestamptz("shown_at").notNull(),
    occurredAt: timestamptz("occurred_at").notNull(),
    createdAt: createdAt(),
  },
  (t) => [
    index("recommendation_attributions_end_user_idx").on(t.endUserId),
    // A click or cart counts once per shown item (rates stay proportions); every purchase counts.
    uniqueIndex("recommendation_attributions_once_key")
      .on(t.recommendationId, t.productId, t.interactionType)
      .where(sql`interaction_type <> 'PURCHASE'`),
  ],
);
