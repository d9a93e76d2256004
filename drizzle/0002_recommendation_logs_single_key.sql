ALTER TABLE "recommendation_logs" DROP CONSTRAINT "recommendation_logs_account_id_accounts_id_fk";
