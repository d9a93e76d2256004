-- Prices, interaction values and price ranges are at most 10^12 (MAX_AMOUNT in src/http/schema-types.ts).
-- Rows stored before that bound are brought within it, so that the mean ratings, revenue sums and their
-- squares read from them stay finite.
UPDATE "interactions" SET "value" = 1e12 WHERE "value" > 1e12;--> statement-breakpoint
UPDATE "products" SET "price" = 1e12 WHERE "price" > 1e12;--> statement-breakpoint
UPDATE "end_users" SET "price_range_min" = least("price_range_min", 1e12), "price_range_max" = least("price_range_max", 1e12)
  WHERE "price_range_min" > 1e12 OR "price_range_max" > 1e12;--> statement-breakpoint
UPDATE "orders" SET "unit_price" = 1e12 WHERE "unit_price" > 1e12;--> statement-breakpoint
UPDATE "recommendation_attributions" SET "revenue" = 1e12 WHERE "revenue" > 1e12;--> statement-breakpoint
UPDATE "recommendation_daily_metrics"
  SET "revenue" = least("revenue", 1e12 * "purchases"), "revenue_sq" = least("revenue_sq", 1e24 * "purchases")
  WHERE "revenue" > 1e12 * "purchases" OR "revenue_sq" > 1e24 * "purchases";
