ALTER TABLE "billing_sessions" ADD COLUMN "success_url" text;--> statement-breakpoint
ALTER TABLE "billing_sessions" ADD COLUMN "cancel_url" text;