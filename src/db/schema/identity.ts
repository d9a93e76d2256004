import { sql } from "drizzle-orm";
import { boolean, index, integer, jsonb, pgTable, serial, text, uniqueIndex } from "drizzle-orm/pg-core";
import { createdAt, timestamptz, updatedAt } from "./columns";

/** A tenant. Every tenant-owned row carries account_id and every index on it leads with account_id. */
export const accounts = pgTable("accounts", {
  id: serial("id").primaryKey(),
  name: text("name").notNull(),
  isActive: boolean("is_active").notNull().default(true),
  plan: text("plan").notNull().default("FREE"),
  /** none | pending | active | lapsed — paid plans need "active". */
  subscriptionStatus: text("subscription_status").notNull().default("none"),
  subscriptionRenewsAt: timestamptz("subscription_renews_at"),
  paymentCustomerId: text("payment_customer_id"),
  onboardingChecklistStatus: jsonb("onboarding_checklist_status")
    .$type<Record<string, unknown>>()
    .notNull()
    .default(sql`'{}'::jsonb`),
  createdAt: createdAt(),
  updatedAt: updatedAt(),
});

/** Dashboard users. Emails are stored lower-cased, so uniqueness is case-insensitive. */
export const systemUsers = pgTable(
  "system_users",
  {
    id: serial("id").primaryKey(),
    accountId: integer("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    email: text("email").notNull(),
    passwordHash: text("password_hash").notNull(),
    fullName: text("full_name"),
    isOwner: boolean("is_owner").notNull().default(false),
    emailVerifiedAt: timestamptz("email_verified_at"),
    /** Tokens issued before this instant are refused (password change, deletion). */
    tokensValidAfter: timestamptz("tokens_valid_after").notNull().defaultNow(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    uniqueIndex("system_users_email_key").on(t.email),
    index("system_users_account_idx").on(t.accountId),
  ],
);

/** Logged-out JWTs, kept until they would have expired anyway. */
export const revokedTokens = pgTable(
  "revoked_tokens",
  {
    jti: text("jti").primaryKey(),
    userId: integer("user_id").notNull(),
    expiresAt: timestamptz("expires_at").notNull(),
    revokedAt: timestamptz("revoked_at").notNull().defaultNow(),
  },
  (t) => [index("revoked_tokens_expires_idx").on(t.expiresAt)],
);

export const emailVerificationTokens = pgTable(
  "email_verification_tokens",
  {
    id: serial("id").primaryKey(),
    userId: integer("user_id")
      .notNull()
      .references(() => systemUsers.id, { onDelete: "cascade" }),
    tokenHash: text("token_hash").notNull(),
    expiresAt: timestamptz("expires_at").notNull(),
    usedAt: timestamptz("used_at"),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex("email_verification_tokens_hash_key").on(t.tokenHash),
    // Deleting a user reaches their tokens through this instead of scanning every user's.
    index("email_verification_tokens_user_id_idx").on(t.userId),
  ],
);

/** API keys: only a hash of the key is stored, with its prefix and last characters for display. */
export const apiKeys = pgTable(
  "api_keys",
  {
    id: serial("id").primaryKey(),
    accountId: integer("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    /** secret | publishable */
    kind: text("kind").notNull(),
    keyHash: text("key_hash").notNull(),
    prefix: text("prefix").notNull(),
    lastChars: text("last_chars").notNull(),
    scopes: jsonb("scopes").$type<string[]>().notNull().default(sql`'[]'::jsonb`),
    allowedDomains: jsonb("allowed_domains").$type<string[]>().notNull().default(sql`'[]'::jsonb`),
    createdByUserId: integer("created_by_user_id"),
    createdAt: createdAt(),
    lastUsedAt: timestamptz("last_used_at"),
    revokedAt: timestamptz("revoked_at"),
  },
  (t) => [
    uniqueIndex("api_keys_hash_key").on(t.keyHash),
    index("api_keys_account_idx").on(t.accountId, t.id),
  ],
);
