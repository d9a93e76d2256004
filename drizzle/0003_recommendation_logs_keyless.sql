ALTER TABLE "recommendation_logs" DROP CONSTRAINT "recommendation_logs_end_user_id_end_users_id_fk";
--> statement-breakpoint
ALTER TABLE "recommendation_logs" DROP CONSTRAINT "recommendation_logs_pkey";
--> statement-breakpoint
DELETE FROM "recommendation_logs" l WHERE NOT EXISTS (SELECT 1 FROM "end_users" u WHERE u."id" = l."end_user_id");
--> statement-breakpoint
-- Deleted end users (an erasure, a sandbox reset, an account's end users going with it) take their
-- recommendation logs with them. The lock is the one the log writer holds shared while it writes: rows a
-- writer is committing now are waited for and deleted here, and a writer that starts later no longer finds
-- these end users, so it writes nothing for them.
CREATE FUNCTION "recommendation_logs_forget_end_users"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_advisory_xact_lock(hashtext('recommendation_logs'), a.account_id)
    FROM (SELECT DISTINCT account_id FROM gone ORDER BY account_id) a;
  DELETE FROM recommendation_logs l USING gone g
    WHERE l.account_id = g.account_id AND l.end_user_id = g.id;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER "end_users_forget_recommendation_logs" AFTER DELETE ON "end_users"
  REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION "recommendation_logs_forget_end_users"();
