import { sql } from "drizzle-orm";
import {
  bigint,
  date,
  doublePrecision,
  index,
  integer,
  jsonb,
  numeric,
  pgTable,
  primaryKey,
  serial,
  text,
  uniqueIndex,
  uuid,
} from "drizzle-orm/pg-core";
import { createdAt, timestamptz } from "./columns";
import { accounts } from "./identity";

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

/**
 * Online metrics per account, day and grouping of the answers (endpoint, strategy, model variant, experiment
 * arm; '' and 0 stand for "none" so that the key is a plain primary key). Kept up to date in the same
 * statements that write the recommendation logs (impressions: the items shown) and the attributions (clicks,
 * carts, purchases, revenue), and decreased by exactly what an erased end user's rows added; reading the
 * metrics never touches events. Revenue is `numeric` so that subtracting an erasure leaves the exact sums.
 * The day is the UTC day the answer was shown.
 */
export const recommendationDailyMetrics = pgTable(
  "recommendation_daily_metrics",
  {
    accountId: integer("account_id").notNull(),
    day: date("day", { mode: "string" }).notNull(),
    endpoint: text("endpoint").notNull(),
    strategy: text("strategy").notNull().default(""),
    modelVariant: text("model_variant").notNull().default(""),
    experimentId: integer("experiment_id").notNull().default(0),
    experimentArm: text("experiment_arm").notNull().default(""),
    impressions: bigint("impressions", { mode: "number" }).notNull().default(0),
    clicks: bigint("clicks", { mode: "number" }).notNull().default(0),
    carts: bigint("carts", { mode: "number" }).notNull().default(0),
    purchases: bigint("purchases", { mode: "number" }).notNull().default(0),
    revenue: numeric("revenue").notNull().default("0"),
    /** Sum of each purchase's revenue squared: the variance of revenue per impression. */
    revenueSq: numeric("revenue_sq").notNull().default("0"),
  },
  (t) => [
    primaryKey({
      name: "recommendation_daily_metrics_pkey",
      columns: [t.accountId, t.day, t.endpoint, t.strategy, t.modelVariant, t.experimentId, t.experimentArm],
    }),
    // Experiment results read one experiment's rows whatever the day.
    index("recommendation_daily_metrics_experiment_idx")
      .on(t.accountId, t.experimentId)
      .where(sql`experiment_id <> 0`),
  ],
);

/**
 * A/B experiments on one recommendation endpoint: each end user is assigned an arm by hashing (experiment id,
 * end user), and the arm's overrides apply to their requests while the experiment runs. At most one running
 * experiment per account and endpoint (the partial unique index makes a concurrent second start a 409).
 */
export const experiments = pgTable(
  "experiments",
  {
    id: serial("id").primaryKey(),
    accountId: integer("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    endpoint: text("endpoint").notNull(),
    /** [{name, traffic, overrides}], the first arm the control. */
    variants: jsonb("variants").$type<unknown[]>().notNull(),
    /** The smallest relative difference the sequential test is set up to find. */
    minimumEffect: doublePrecision("minimum_effect").notNull(),
    status: text("status").notNull(),
    createdAt: createdAt(),
    stoppedAt: timestamptz("stopped_at"),
  },
  (t) => [
    index("experiments_account_idx").on(t.accountId, t.id),
    uniqueIndex("experiments_one_running_key").on(t.accountId, t.endpoint).where(sql`status = 'running'`),
  ],
);
