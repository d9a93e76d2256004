import { sql } from "drizzle-orm";
import {
  bigint,
  boolean,
  doublePrecision,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  serial,
  text,
  uniqueIndex,
} from "drizzle-orm/pg-core";
import { bytea, createdAt, timestamptz } from "./columns";
import { accounts } from "./identity";

const accountRef = () =>
  integer("account_id")
    .notNull()
    .references(() => accounts.id, { onDelete: "cascade" });

export interface IngestionRecordError {
  recordType: string;
  externalId: string;
  /** The record's position in its array of the request (absent for errors older than this field). */
  index?: number;
  errorMessage: string;
}

/**
 * Bulk ingestion jobs. The accepted request is stored with the job, so a job interrupted by a crash is
 * resumed from its recorded cursor; each chunk and the cursor advance commit in one transaction.
 */
export const ingestionJobs = pgTable(
  "ingestion_jobs",
  {
    id: serial("id").primaryKey(),
    accountId: accountRef(),
    taskId: text("task_id").notNull(),
    /** processing | completed | completed_with_errors | failed */
    status: text("status").notNull(),
    payload: jsonb("payload").$type<Record<string, unknown>>(),
    /**
     * Raised each time an erasure removes an end user's records from the stored request, so a worker holding
     * an older copy (read earlier, or handed over in memory) reads it again before its next chunk.
     */
    payloadRevision: integer("payload_revision").notNull().default(0),
    totalUsers: integer("total_users").notNull().default(0),
    totalProducts: integer("total_products").notNull().default(0),
    totalInteractions: integer("total_interactions").notNull().default(0),
    processedUsers: integer("processed_users").notNull().default(0),
    processedProducts: integer("processed_products").notNull().default(0),
    processedInteractions: integer("processed_interactions").notNull().default(0),
    errors: jsonb("errors").$type<IngestionRecordError[]>().notNull().default(sql`'[]'::jsonb`),
    failureReason: text("failure_reason"),
    attempts: integer("attempts").notNull().default(0),
    claimedBy: text("claimed_by"),
    heartbeatAt: timestamptz("heartbeat_at"),
    createdAt: createdAt(),
    startedAt: timestamptz("started_at"),
    finishedAt: timestamptz("finished_at"),
  },
  (t) => [
    index("ingestion_jobs_account_idx").on(t.accountId, t.id),
    index("ingestion_jobs_status_idx").on(t.status, t.id),
  ],
);

export const trainingJobs = pgTable(
  "training_jobs",
  {
    id: serial("id").primaryKey(),
    accountId: accountRef(),
    taskId: text("task_id").notNull(),
    /** queued | running | completed | failed */
    status: text("status").notNull(),
    /** customer (the training route, the sandbox quick-start) | erasure (the service, after end-user erasures) */
    startedBy: text("started_by").notNull().default("customer"),
    progress: integer("progress").notNull().default(0),
    stage: text("stage").notNull().default("queued"),
    options: jsonb("options").$type<Record<string, unknown>>().notNull().default(sql`'{}'::jsonb`),
    error: text("error"),
    modelId: integer("model_id"),
    metrics: jsonb("metrics").$type<Record<string, unknown>>(),
    attempts: integer("attempts").notNull().default(0),
    claimedBy: text("claimed_by"),
    heartbeatAt: timestamptz("heartbeat_at"),
    createdAt: createdAt(),
    startedAt: timestamptz("started_at"),
    finishedAt: timestamptz("finished_at"),
  },
  (t) => [
    index("training_jobs_account_idx").on(t.accountId, t.id),
    index("training_jobs_status_idx").on(t.status, t.id),
    // At most one retraining after erasures waits or runs per account, whichever process queued it.
    uniqueIndex("training_jobs_one_erasure_retraining_key")
      .on(t.accountId)
      .where(sql`${t.status} in ('queued', 'running') and ${t.startedBy} = 'erasure'`),
  ],
);

export const models = pgTable(
  "models",
  {
    id: serial("id").primaryKey(),
    accountId: accountRef(),
    version: integer("version").notNull(),
    algorithm: text("algorithm").notNull(),
    params: jsonb("params").$type<Record<string, unknown>>().notNull().default(sql`'{}'::jsonb`),
    trainingSeconds: doublePrecision("training_seconds").notNull(),
    counts: jsonb("counts").$type<{ users: number; items: number; interactions: number }>().notNull(),
    metrics: jsonb("metrics").$type<Record<string, unknown>>().notNull(),
    isPublished: boolean("is_published").notNull().default(false),
    artifactBytes: bigint("artifact_bytes", { mode: "number" }).notNull().default(0),
    /** end_user_erasures.erasures as the training read it before loading its data (0: none yet). */
    erasuresSeen: integer("erasures_seen").notNull().default(0),
    createdAt: createdAt(),
  },
  (t) => [index("models_account_idx").on(t.accountId, t.id)],
);

/** Model artifacts in chunks, so every process on the database can load a snapshot. */
export const modelArtifactChunks = pgTable(
  "model_artifact_chunks",
  {
    modelId: integer("model_id")
      .notNull()
      .references(() => models.id, { onDelete: "cascade" }),
    seq: integer("seq").notNull(),
    accountId: accountRef(),
    data: bytea("data").notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.modelId, t.seq] }),
    // Deleting an account reaches its chunks through this instead of scanning every account's.
    index("model_artifact_chunks_account_id_idx").on(t.accountId),
  ],
);
