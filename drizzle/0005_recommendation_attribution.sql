-- Online evaluation: every answer is logged with its recommendation id (answers for nobody in particular with a
-- null end user, found by a partial index on the id), and clicks, carts and purchases credited to an answer are
-- kept in recommendation_attributions. Additive: old log rows keep a null recommendation id.
CREATE TABLE "recommendation_attributions" (
	"account_id" integer NOT NULL,
	"end_user_id" bigint NOT NULL,
	"recommendation_id" uuid NOT NULL,
	"product_id" bigint NOT NULL,
	"position" integer NOT NULL,
	"interaction_type" text NOT NULL,
	"revenue" double precision NOT NULL,
	"endpoint" text NOT NULL,
	"strategy" text,
	"model_variant" text,
	"experiment_id" integer,
	"experiment_arm" text,
	"shown_at" timestamp with time zone NOT NULL,
	"occurred_at" timestamp with time zone NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "recommendation_logs" ALTER COLUMN "end_user_id" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "recommendation_logs" ADD COLUMN "recommendation_id" uuid;--> statement-breakpoint
ALTER TABLE "recommendation_logs" ADD COLUMN "strategy" text;--> statement-breakpoint
ALTER TABLE "recommendation_logs" ADD COLUMN "model_variant" text;--> statement-breakpoint
ALTER TABLE "recommendation_logs" ADD COLUMN "experiment_id" integer;--> statement-breakpoint
ALTER TABLE "recommendation_logs" ADD COLUMN "experiment_arm" text;--> statement-breakpoint
CREATE INDEX "recommendation_attributions_end_user_idx" ON "recommendation_attributions" USING btree ("end_user_id");--> statement-breakpoint
CREATE UNIQUE INDEX "recommendation_attributions_once_key" ON "recommendation_attributions" USING btree ("recommendation_id","product_id","interaction_type") WHERE interaction_type <> 'PURCHASE';--> statement-breakpoint
CREATE INDEX "recommendation_logs_anonymous_id_idx" ON "recommendation_logs" USING btree ("recommendation_id") WHERE end_user_id is null;