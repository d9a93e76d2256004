-- Interactions, orders and searches name their end user (and interactions their product) by (account, id)
-- instead of by id alone. Deleting an end user or a product (an erasure, a sandbox reset, an account's
-- deletion) then finds the rows to delete through each table's (account, …) index; keyed by id alone, every
-- deleted end user or product scanned the whole table. A row can no longer name another account's end user
-- or product either. The (account, id) indexes become unique for the keys to refer to.
CREATE UNIQUE INDEX "end_users_account_id_key" ON "end_users" USING btree ("account_id","id");--> statement-breakpoint
CREATE UNIQUE INDEX "products_account_id_key" ON "products" USING btree ("account_id","id");--> statement-breakpoint
DROP INDEX "end_users_account_id_idx";--> statement-breakpoint
DROP INDEX "products_account_id_idx";--> statement-breakpoint
ALTER TABLE "interactions" DROP CONSTRAINT "interactions_end_user_id_end_users_id_fk";--> statement-breakpoint
ALTER TABLE "interactions" DROP CONSTRAINT "interactions_product_id_products_id_fk";--> statement-breakpoint
ALTER TABLE "orders" DROP CONSTRAINT "orders_end_user_id_end_users_id_fk";--> statement-breakpoint
ALTER TABLE "searches" DROP CONSTRAINT "searches_end_user_id_end_users_id_fk";--> statement-breakpoint
ALTER TABLE "interactions" ADD CONSTRAINT "interactions_account_end_user_fk" FOREIGN KEY ("account_id","end_user_id") REFERENCES "public"."end_users"("account_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "interactions" ADD CONSTRAINT "interactions_account_product_fk" FOREIGN KEY ("account_id","product_id") REFERENCES "public"."products"("account_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "orders" ADD CONSTRAINT "orders_account_end_user_fk" FOREIGN KEY ("account_id","end_user_id") REFERENCES "public"."end_users"("account_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "searches" ADD CONSTRAINT "searches_account_end_user_fk" FOREIGN KEY ("account_id","end_user_id") REFERENCES "public"."end_users"("account_id","id") ON DELETE cascade ON UPDATE no action;
