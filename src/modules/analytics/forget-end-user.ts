import { sql } from "drizzle-orm";
import type { Database, Tx } from "../../db/client";
import { ATTRIBUTION_SUMS } from "./attribution-queue";

/**
 * Takes an end user's contributions out of the daily metrics, inside the erasure's transaction and before
 * their recommendation logs and attributions are deleted: the impressions of their logged answers and what
 * their attributions credited, each subtracted with the very expression that added it, so the metrics are
 * what they would be had the user never been served. Logs from before answers carried an id were never
 * counted and are not subtracted.
 */
export async function forgetEndUserMetrics(
  database: Database,
  tx: Tx,
  accountId: number,
  endUserId: number,
): Promise<void> {
  await database.rows(
    sql`
    update recommendation_daily_metrics d set impressions = d.impressions - g.n
    from (
      select (created_at at time zone 'UTC')::date as day, endpoint, coalesce(strategy, '') as strategy,
             coalesce(model_variant, '') as model_variant, coalesce(experiment_id, 0) as experiment_id,
             coalesce(experiment_arm, '') as experiment_arm, sum(json_array_length(items::json)) as n
      from recommendation_logs
      where account_id = ${accountId} and end_user_id = ${endUserId} and recommendation_id is not null
      group by 1, 2, 3, 4, 5, 6
    ) as g
    where d.account_id = ${accountId} and d.day = g.day and d.endpoint = g.endpoint and d.strategy = g.strategy
      and d.model_variant = g.model_variant and d.experiment_id = g.experiment_id
      and d.experiment_arm = g.experiment_arm`,
    tx,
  );
  await database.rows(
    sql`
    update recommendation_daily_metrics d set
      clicks = d.clicks - g.clicks, carts = d.carts - g.carts, purchases = d.purchases - g.purchases,
      revenue = d.revenue - g.revenue, revenue_sq = d.revenue_sq - g.revenue_sq
    from (
      select (shown_at at time zone 'UTC')::date, endpoint, coalesce(strategy, ''), coalesce(model_variant, ''),
             coalesce(experiment_id, 0), coalesce(experiment_arm, ''), ${ATTRIBUTION_SUMS}
      from recommendation_attributions
      where account_id = ${accountId} and end_user_id = ${endUserId}
      group by 1, 2, 3, 4, 5, 6
    ) as g(day, endpoint, strategy, model_variant, experiment_id, experiment_arm, clicks, carts, purchases,
           revenue, revenue_sq)
    where d.account_id = ${accountId} and d.day = g.day and d.endpoint = g.endpoint and d.strategy = g.strategy
      and d.model_variant = g.model_variant and d.experiment_id = g.experiment_id
      and d.experiment_arm = g.experiment_arm`,
    tx,
  );
}
