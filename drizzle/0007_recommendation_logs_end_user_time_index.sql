-- A click, cart or purchase sent without its recommendation id is credited to the latest answer that showed
-- the product to that end user within the 24 hours before it. Keyed by end user alone, that lookup read every
-- answer the user was ever shown; keyed by (end user, time, id) it walks back from the interaction through
-- that day's answers only. The new key replaces the old one (every read and delete by end user still uses
-- it), so the most written table keeps a single index for its end users' rows.
DROP INDEX "recommendation_logs_end_user_idx";--> statement-breakpoint
CREATE INDEX "recommendation_logs_end_user_time_idx" ON "recommendation_logs" USING btree ("end_user_id","created_at","id");
