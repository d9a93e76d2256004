CREATE TABLE "end_user_erasures" (
	"account_id" integer PRIMARY KEY NOT NULL,
	"erasures" integer DEFAULT 0 NOT NULL,
	"last_erased_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "models" ADD COLUMN "erasures_seen" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "training_jobs" ADD COLUMN "started_by" text DEFAULT 'customer' NOT NULL;--> statement-breakpoint
ALTER TABLE "end_user_erasures" ADD CONSTRAINT "end_user_erasures_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "training_jobs_one_erasure_retraining_key" ON "training_jobs" USING btree ("account_id") WHERE "training_jobs"."status" in ('queued', 'running') and "training_jobs"."started_by" = 'erasure';