import { sql } from "drizzle-orm";
import {
  type AnyPgColumn,
  bigint,
  bigserial,
  boolean,
  doublePrecision,
  foreignKey,
  index,
  integer,
  jsonb,
  pgTable,
  text,
  uniqueIndex,
  uuid,
} from "drizzle-orm/pg-core";
import { createdAt, timestamptz, updatedAt } from "./columns";
import { accounts } from "./identity";

const accountRef = () =>
  integer("account_id")
    .notNull()
    .references(() => accounts.id, { onDelete: "cascade" });

export const products = pgTable(
  "products",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    accountId: accountRef(),
    externalId: text("external_id").notNull(),
    name: text("name").notNull(),
    description: text("description"),
    price: doublePrecision("price").notNull(),
    /** Slash-separated path, e.g. "electronics/phones"; sub-category queries match the prefix. */
    category: text("category").notNull(),
    brand: text("brand"),
    inStock: boolean("in_stock").notNull().default(true),
    attributes: jsonb("attributes").$type<Record<string, unknown>>().notNull().default(sql`'{}'::jsonb`),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
    /** Soft delete: deleted products answer 404 and are never listed or recommended. */
    deletedAt: timestamptz("deleted_at"),
  },
  (t) => [
    uniqueIndex("products_account_external_key").on(t.accountId, t.externalId),
    // Unique so that the account's rows name a product by (account, id): see ownEndUser.
    uniqueIndex("products_account_id_key").on(t.accountId, t.id),
    index("products_account_category_idx").on(t.accountId, t.category.op("text_pattern_ops")),
    // A product's last change (an update or its deletion): the snapshots' catalogue watermark and refresh
    // read the newest changes through it instead of scanning the account's catalogue (~100 ms for 100k
    // products on the embedded store, every refresh).
    index("products_account_changed_idx").on(
      t.accountId,
      sql`greatest(${t.updatedAt}, coalesce(${t.deletedAt}, ${t.updatedAt}))`,
    ),
  ],
);

export const endUsers = pgTable(
  "end_users",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    accountId: accountRef(),
    externalId: text("external_id").notNull(),
    preferredCategories: jsonb("preferred_categories").$type<string[]>().notNull().default(sql`'[]'::jsonb`),
    priceRangeMin: doublePrecision("price_range_min"),
    priceRangeMax: doublePrecision("price_range_max"),
    attributes: jsonb("attributes").$type<Record<string, unknown>>().notNull().default(sql`'{}'::jsonb`),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    uniqueIndex("end_users_account_external_key").on(t.accountId, t.externalId),
    uniqueIndex("end_users_account_id_key").on(t.accountId, t.id),
  ],
);

/**
 * Per account: how many end users with interactions have been erased, and when the latest was. Every model
 * records the count its training saw (models.erasures_seen), so a published model trained on data erased
 * since is found by comparing the two (see src/modules/training/erasure-retraining.ts).
 */
export const endUserErasures = pgTable("end_user_erasures", {
  accountId: accountRef().primaryKey(),
  erasures: integer("erasures").notNull().default(0),
  lastErasedAt: timestamptz("last_erased_at").notNull(),
});

const endUserRef = () => bigint("end_user_id", { mode: "number" }).notNull();

/**
 * The account of a row that also names the account's end user by (account, id) (see `ownEndUser`): that key
 * already holds the account to one that exists, and deleting the account deletes the row through its end
 * users, so the row carries no foreign key to `accounts` of its own. Such a key cost every insert a third
 * check (about 8 µs of an 86 µs interaction on the embedded store) and, on Postgres, a share lock on the
 * account's one row, taken by every connection writing that account's events.
 */
const ownedAccount = () => integer("account_id").notNull();

/**
 * A row of the account's end user (and product), keyed by (account, id): a row can only name the account's
 * own, and deleting an end user or a product finds its rows through the table's (account, …) index. Keyed by
 * the id alone, each deleted end user or product cost a scan of the whole table (100 end users of a sandbox
 * reset took 11 s with 1.2M interactions stored).
 */
const ownEndUser = (name: string, t: { accountId: AnyPgColumn; endUserId: AnyPgColumn }) =>
  foreignKey({
    name,
    columns: [t.accountId, t.endUserId],
    foreignColumns: [endUsers.accountId, endUsers.id],
  }).onDelete("cascade");

export const interactions = pgTable(
  "interactions",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    accountId: ownedAccount(),
    endUserId: endUserRef(),
    productId: bigint("product_id", { mode: "number" }).notNull(),
    /** VIEW, CLICK, CART, PURCHASE, RATING, LIKE, DISLIKE, SEARCH (upper-case). */
    interactionType: text("interaction_type").notNull(),
    value: doublePrecision("value").notNull(),
    query: text("query"),
    occurredAt: timestamptz("occurred_at").notNull(),
    createdAt: createdAt(),
  },
  (t) => [
    index("interactions_account_id_idx").on(t.accountId, t.id),
    index("interactions_account_user_time_idx").on(t.accountId, t.endUserId, t.occurredAt),
    index("interactions_account_product_idx").on(t.accountId, t.productId),
    ownEndUser("interactions_account_end_user_fk", t),
    foreignKey({
      name: "interactions_account_product_fk",
      columns: [t.accountId, t.productId],
      foreignColumns: [products.accountId, products.id],
    }).onDelete("cascade"),
  ],
);

export const searches = pgTable(
  "searches",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    accountId: ownedAccount(),
    endUserId: endUserRef(),
    query: text("query"),
    productId: bigint("product_id", { mode: "number" }),
    occurredAt: timestamptz("occurred_at").notNull(),
  },
  (t) => [
    index("searches_account_user_idx").on(t.accountId, t.endUserId),
    ownEndUser("searches_account_end_user_fk", t),
  ],
);

export const orders = pgTable(
  "orders",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    accountId: ownedAccount(),
    endUserId: endUserRef(),
    productId: bigint("product_id", { mode: "number" }).notNull(),
    quantity: doublePrecision("quantity").notNull(),
    unitPrice: doublePrecision("unit_price").notNull(),
    occurredAt: timestamptz("occurred_at").notNull(),
  },
  (t) => [
    index("orders_account_user_idx").on(t.accountId, t.endUserId),
    ownEndUser("orders_account_end_user_fk", t),
  ],
);

/**
 * What was recommended to whom: kept for the end user's export and deleted with their erasure, and the
 * impressions online evaluation attributes clicks, carts and purchases to. One row per response makes this the
 * most written table, so it carries no key of its own and no foreign key (a primary key and the end user's
 * foreign key were over half of Postgres's work per row): `id` only orders the entries, and the end users'
 * delete trigger of migration 0003 removes a deleted end user's rows (also when an account's end users go with
 * it). The log queue writes only rows of end users that exist, under a lock that trigger takes too, so an
 * erasure racing a write leaves nothing behind (see log-queue.ts). Answers that name no end user (similar
 * products, category listings) are logged with a null end user, so that a click sent with their
 * `recommendation_id` can still be attributed.
 */
export const recommendationLogs = pgTable(
  "recommendation_logs",
  {
    id: bigserial("id", { mode: "number" }).notNull(),
    accountId: integer("account_id").notNull(),
    /** Null: an answer for nobody in particular (similar products, category listings). */
    endUserId: bigint("end_user_id", { mode: "number" }),
    endpoint: text("endpoint").notNull(),
    /** The shown external ids as the JSON text of an array, in the order shown (position = array index). */
    items: text("items").notNull(),
    /** The answer's `recommendationId`; null on rows logged before answers carried one. */
    recommendationId: uuid("recommendation_id"),
    /** The personalised query's strategy and model variant (null for answers that have none). */
    strategy: text("strategy"),
    modelVariant: text("model_variant"),
    /** The experiment and arm that served the answer, if one was running for the endpoint. */
    experimentId: integer("experiment_id"),
    experimentArm: text("experiment_arm"),
    createdAt: createdAt(),
  },
  // By end user first: every read and delete names one end user (whose id is unique across accounts) and
  // still filters by account. Then by time (and id, the order of one flush's rows, which share a time): a
  // click sent without its recommendation id is credited to the latest answer of the last 24 hours that
  // showed the product, found by walking this index back from the click, so its cost depends on the answers
  // of that day, not on the end user's whole history. The answers for nobody in particular are found by
  // their recommendation id, with a partial index that rows of end users do not pay for.
  (t) => [
    index("recommendation_logs_end_user_time_idx").on(t.endUserId, t.createdAt, t.id),
    index("recommendation_logs_anonymous_id_idx").on(t.recommendationId).where(sql`end_user_id is null`),
  ],
);
