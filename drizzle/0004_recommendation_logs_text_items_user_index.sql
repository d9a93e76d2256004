-- The most written table, made cheaper to write. The shown items are kept as the JSON text the service
-- writes: nothing queries inside them (the export returns them whole), and parsing every logged response into
-- jsonb was the largest part of Postgres's work per row; existing rows keep their content (jsonb's text form
-- is the same JSON). The index keys on the end user alone: every read and delete names one end user, and a
-- one-column key costs less to maintain than (account_id, end_user_id). The column change rewrites the
-- table once; the old index is dropped first so that it is not rebuilt for nothing.
DROP INDEX "recommendation_logs_account_user_idx";--> statement-breakpoint
ALTER TABLE "recommendation_logs" ALTER COLUMN "items" SET DATA TYPE text;--> statement-breakpoint
CREATE INDEX "recommendation_logs_end_user_idx" ON "recommendation_logs" USING btree ("end_user_id");
