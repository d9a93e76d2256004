-- Online metrics kept as daily aggregates, and A/B experiments. The aggregates start from what is already
-- logged with a recommendation id and attributed (a one-time scan here; afterwards they are only updated
-- incrementally by the writers), so that subtracting an erased end user later stays exact.
CREATE TABLE "experiments" (
	"id" serial PRIMARY KEY NOT NULL,
	"account_id" integer NOT NULL,
	"name" text NOT NULL,
	"endpoint" text NOT NULL,
	"variants" jsonb NOT NULL,
	"minimum_effect" double precision NOT NULL,
	"status" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"stopped_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "recommendation_daily_metrics" (
	"account_id" integer NOT NULL,
	"day" date NOT NULL,
	"endpoint" text NOT NULL,
	"strategy" text DEFAULT '' NOT NULL,
	"model_variant" text DEFAULT '' NOT NULL,
	"experiment_id" integer DEFAULT 0 NOT NULL,
	"experiment_arm" text DEFAULT '' NOT NULL,
	"impressions" bigint DEFAULT 0 NOT NULL,
	"clicks" bigint DEFAULT 0 NOT NULL,
	"carts" bigint DEFAULT 0 NOT NULL,
	"purchases" bigint DEFAULT 0 NOT NULL,
	"revenue" numeric DEFAULT '0' NOT NULL,
	"revenue_sq" numeric DEFAULT '0' NOT NULL,
	CONSTRAINT "recommendation_daily_metrics_pkey" PRIMARY KEY("account_id","day","endpoint","strategy","model_variant","experiment_id","experiment_arm")
);
--> statement-breakpoint
ALTER TABLE "experiments" ADD CONSTRAINT "experiments_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "experiments_account_idx" ON "experiments" USING btree ("account_id","id");--> statement-breakpoint
CREATE UNIQUE INDEX "experiments_one_running_key" ON "experiments" USING btree ("account_id","endpoint") WHERE status = 'running';--> statement-breakpoint
CREATE INDEX "recommendation_daily_metrics_experiment_idx" ON "recommendation_daily_metrics" USING btree ("account_id","experiment_id") WHERE experiment_id <> 0;--> statement-breakpoint
INSERT INTO "recommendation_daily_metrics" ("account_id", "day", "endpoint", "strategy", "model_variant", "experiment_id", "experiment_arm", "impressions")
  SELECT account_id, (created_at AT TIME ZONE 'UTC')::date, endpoint, coalesce(strategy, ''), coalesce(model_variant, ''),
         coalesce(experiment_id, 0), coalesce(experiment_arm, ''), sum(json_array_length(items::json))
  FROM "recommendation_logs" WHERE recommendation_id IS NOT NULL
  GROUP BY 1, 2, 3, 4, 5, 6, 7;
--> statement-breakpoint
INSERT INTO "recommendation_daily_metrics" AS d ("account_id", "day", "endpoint", "strategy", "model_variant", "experiment_id", "experiment_arm", "clicks", "carts", "purchases", "revenue", "revenue_sq")
  SELECT account_id, (shown_at AT TIME ZONE 'UTC')::date, endpoint, coalesce(strategy, ''), coalesce(model_variant, ''),
         coalesce(experiment_id, 0), coalesce(experiment_arm, ''),
         count(*) FILTER (WHERE interaction_type = 'CLICK'), count(*) FILTER (WHERE interaction_type = 'CART'),
         count(*) FILTER (WHERE interaction_type = 'PURCHASE'), sum(revenue::numeric), sum(revenue::numeric * revenue::numeric)
  FROM "recommendation_attributions"
  GROUP BY 1, 2, 3, 4, 5, 6, 7
  ON CONFLICT ON CONSTRAINT "recommendation_daily_metrics_pkey" DO UPDATE SET clicks = excluded.clicks, carts = excluded.carts,
    purchases = excluded.purchases, revenue = excluded.revenue, revenue_sq = excluded.revenue_sq;
