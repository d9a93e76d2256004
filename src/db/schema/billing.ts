import { sql } from "drizzle-orm";
import { date, index, integer, jsonb, pgTable, primaryKey, serial, text } from "drizzle-orm/pg-core";
import { createdAt, timestamptz, updatedAt } from "./columns";
import { accounts } from "./identity";

/** Per-account daily usage counters, incremented in batches from in-memory or Redis counters. */
export const usageDaily = pgTable(
  "usage_daily",
  {
    accountId: integer("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    day: date("day", { mode: "string" }).notNull(),
    requests: integer("requests").notNull().default(0),
    recommendations: integer("recommendations").notNull().default(0),
    ingestedRecords: integer("ingested_records").notNull().default(0),
    trainings: integer("trainings").notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.accountId, t.day] })],
);

/** Checkout / subscription sessions opened with the payment provider. */
export const billingSessions = pgTable(
  "billing_sessions",
  {
    id: serial("id").primaryKey(),
    accountId: integer("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    provider: text("provider").notNull(),
    kind: text("kind").notNull(),
    plan: text("plan").notNull(),
    /**
     * pending | authorized | cancelled, or superseded: replaced by a newer authorised subscription of the
     * account and being cancelled with the provider (cancelled once the provider confirmed).
     */
    status: text("status").notNull().default("pending"),
    externalId: text("external_id").notNull(),
    checkoutUrl: text("checkout_url"),
    /** Where the provider's page sends the payer after confirming or cancelling. */
    successUrl: text("success_url"),
    cancelUrl: text("cancel_url"),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    index("billing_sessions_account_idx").on(t.accountId, t.id),
    index("billing_sessions_external_idx").on(t.externalId),
  ],
);

/** Webhook events already applied, keyed by provider and event id, so duplicates are ignored. */
export const paymentEvents = pgTable(
  "payment_events",
  {
    provider: text("provider").notNull(),
    eventId: text("event_id").notNull(),
    accountId: integer("account_id"),
    payload: jsonb("payload").$type<Record<string, unknown>>().notNull().default(sql`'{}'::jsonb`),
    receivedAt: timestamptz("received_at").notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.provider, t.eventId] })],
);
