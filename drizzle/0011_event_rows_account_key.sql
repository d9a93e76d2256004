ALTER TABLE "interactions" DROP CONSTRAINT "interactions_account_id_accounts_id_fk";
--> statement-breakpoint
ALTER TABLE "orders" DROP CONSTRAINT "orders_account_id_accounts_id_fk";
--> statement-breakpoint
ALTER TABLE "searches" DROP CONSTRAINT "searches_account_id_accounts_id_fk";
