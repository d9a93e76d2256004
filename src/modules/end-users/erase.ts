import { type SQL, sql } from "drizzle-orm";
import type { AppEvents } from "../../app-events";
import type { Database } from "../../db/client";
import { numberArray } from "../../db/pg-array";
import { lockRecommendationLogs } from "../../db/recommendation-log-lock";
import { notFound } from "../../shared/errors";
import type { Logger } from "../../shared/logger";
import type { AttributionQueue } from "../analytics/attribution-queue";
import { forgetEndUserMetrics } from "../analytics/forget-end-user";
import type { RecommendationService } from "../recommendations/serving/service";
import { notifyEndUserErased } from "./events";
import { endUserLookupQuery } from "./queries";
import type { ErasureResult } from "./schemas";

type ErasedKind = keyof ErasureResult["deleted"];

/** The deletes of an erasure, each on an index leading with (account_id, end_user_id); also EXPLAINed in tests. */
export function erasureStatements(accountId: number, endUserId: number): Record<ErasedKind | "endUser", SQL> {
  const counted = (table: string) => sql`with gone as (
      delete from ${sql.identifier(table)} where account_id = ${accountId} and end_user_id = ${endUserId} returning 1
    ) select count(*)::int as n from gone`;
  return {
    interactions: counted("interactions"),
    searches: counted("searches"),
    recommendations: counted("recommendation_logs"),
    orders: counted("orders"),
    attributions: counted("recommendation_attributions"),
    endUser: sql`delete from end_users where account_id = ${accountId} and id = ${endUserId}`,
  };
}

/** The stored requests' arrays that name end users, with the field that does: a user's and an interaction's. */
const NAMING_FIELDS = [
  ["users", "externalId"],
  ["interactions", "external_user_id"],
] as const;

/** The records of one array of a job's stored request, as a set-returning expression. */
const storedRecords = (array: string) =>
  sql`jsonb_array_elements(coalesce(payload->${array}::text, '[]'::jsonb))`;

/**
 * Locks the bulk-ingestion jobs still to apply (queued or under way) whose stored request has a record of
 * the end user, and answers their ids. Taken first in an erasure: a job's chunk locks its job row before it
 * writes any end user (ingestion/process.ts), so erasure waits for a chunk under way, and a chunk that
 * starts later waits for the erasure and then reads the request it leaves (see `ingestionScrubStatements`).
 * The order (job rows, then the end user) is the chunk's too, so neither waits for the other in a circle.
 */
export function lockIngestionJobsNaming(accountId: number, externalId: string): SQL {
  const names = sql.join(
    NAMING_FIELDS.map(
      ([array, field]) =>
        sql`exists (select 1 from ${storedRecords(array)} as r where r->>${field}::text = ${externalId})`,
    ),
    sql` or `,
  );
  return sql`select id::int as id from ingestion_jobs
    where account_id = ${accountId} and status = 'processing' and payload is not null and (${names})
    order by id
    for update`;
}

/**
 * Counts the erasure for the account when the end user had interactions, the only data of theirs a model is
 * trained on: a published model that saw fewer erasures is then retrained by the service
 * (src/modules/training/erasure-retraining.ts). Inside the erasure's transaction, so the count becomes
 * visible together with the deletes.
 */
export function erasureCountStatement(accountId: number): SQL {
  return sql`insert into end_user_erasures (account_id, erasures, last_erased_at) values (${accountId}, 1, now())
    on conflict (account_id) do update
    set erasures = end_user_erasures.erasures + 1, last_erased_at = excluded.last_erased_at`;
}

/**
 * Ingestion-job errors name the records they refused: an end user by their external id, an interaction as
 * `{external_user_id}:{external_product_id}`. Erasure removes those entries; it replaces the end user's
 * records in the stored requests of the jobs still to apply (`pendingJobIds`, locked above) with nulls,
 * which those jobs skip, and raises their revision so a worker holding an older copy reads it again; and it
 * drops any stored request left on a job that has finished (finished jobs drop theirs; rows of older
 * versions may still hold one).
 */
export function ingestionScrubStatements(
  accountId: number,
  externalId: string,
  pendingJobIds: readonly number[],
): SQL[] {
  const names = sql`(e->>'recordType' <> 'product'
    and (e->>'externalId' = ${externalId} or starts_with(e->>'externalId', ${`${externalId}:`})))`;
  // Null in place rather than removed: the job's cursors and the record errors' `index` count positions.
  const withoutUser = sql.join(
    NAMING_FIELDS.map(
      ([array, field]) => sql`${array}::text, coalesce((
        select jsonb_agg(case when r->>${field}::text = ${externalId} then 'null'::jsonb else r end order by n)
        from ${storedRecords(array)} with ordinality as t(r, n)
      ), '[]'::jsonb)`,
    ),
    sql`, `,
  );
  return [
    sql`update ingestion_jobs
        set errors = coalesce((select jsonb_agg(e) from jsonb_array_elements(errors) as e where not ${names}), '[]'::jsonb)
        where account_id = ${accountId} and exists (select 1 from jsonb_array_elements(errors) as e where ${names})`,
    ...(pendingJobIds.length === 0
      ? []
      : [
          sql`update ingestion_jobs
            set payload = payload || jsonb_build_object(${withoutUser}), payload_revision = payload_revision + 1
            where account_id = ${accountId} and id = any(${numberArray(pendingJobIds)}::int[])`,
        ]),
    sql`update ingestion_jobs set payload = null
        where account_id = ${accountId} and status <> 'processing' and payload is not null`,
  ];
}

const NOTHING_DELETED: ErasureResult["deleted"] = {
  interactions: 0,
  searches: 0,
  recommendations: 0,
  orders: 0,
  attributions: 0,
};

/**
 * Right to erasure: hard-deletes the end user and every interaction, search, recommendation log, order and
 * attribution of theirs in one transaction, scrubs them from ingestion jobs (a bulk job accepted earlier and not
 * yet done applies none of their records afterwards), then tells every cache (here and in other processes) to
 * forget them. Recommendation logs and attributions still queued in this process are written first, so they
 * are deleted and counted too. The next training reads from the database, so it no longer sees them either;
 * the service starts that training itself when the customer does not (erasure-retraining.ts).
 */
export async function eraseEndUser({
  ctx,
  deps,
  input,
}: {
  ctx: { readonly accountId: number };
  deps: {
    readonly database: Database;
    readonly logger: Logger;
    readonly recommendations: RecommendationService;
    readonly attributions: AttributionQueue;
    readonly events: Pick<AppEvents, "endUserErased">;
  };
  input: { externalId: string };
}): Promise<ErasureResult> {
  const { database } = deps;
  const accountId = ctx.accountId;
  await deps.recommendations.logs.flush();
  await deps.attributions.flush();
  const erased = await database.db.transaction(async (tx) => {
    const pendingJobs = await database.rows<{ id: number }>(
      lockIngestionJobsNaming(accountId, input.externalId),
      tx,
    );
    const pendingJobIds = pendingJobs.map((job) => Number(job.id));
    const [user] = await endUserLookupQuery(tx, accountId, input.externalId).for("update");
    if (user === undefined) {
      if (pendingJobIds.length === 0) throw notFound("End user");
      // Not stored yet, only named by a bulk request still to be applied: the erasure takes their records
      // out of it, so the job never creates them, and answers as for an end user who had nothing else.
      for (const statement of ingestionScrubStatements(accountId, input.externalId, pendingJobIds))
        await database.rows(statement, tx);
      return { endUserId: null, deleted: NOTHING_DELETED };
    }
    // The recommendation-log writers (log and attribution queues) hold this lock shared while they write: one
    // under way is waited for, and one that starts later finds the end user gone and writes nothing for them.
    await lockRecommendationLogs(tx, accountId);
    await forgetEndUserMetrics(database, tx, accountId, user.id);
    const statements = erasureStatements(accountId, user.id);
    const count = async (statement: SQL) =>
      Number((await database.rows<{ n: number }>(statement, tx))[0]?.n ?? 0);
    const deleted = {
      interactions: await count(statements.interactions),
      searches: await count(statements.searches),
      recommendations: await count(statements.recommendations),
      orders: await count(statements.orders),
      attributions: await count(statements.attributions),
    };
    await database.rows(statements.endUser, tx);
    for (const statement of ingestionScrubStatements(accountId, input.externalId, pendingJobIds))
      await database.rows(statement, tx);
    // Last: the account's counter row stays locked only until the commit that follows.
    if (deleted.interactions > 0) await database.rows(erasureCountStatement(accountId), tx);
    return { endUserId: user.id, deleted };
  });

  if (erased.endUserId !== null) {
    const event = { accountId, externalId: input.externalId, endUserId: erased.endUserId };
    deps.events.endUserErased.emit(event);
    await notifyEndUserErased(database, event).catch((error: unknown) => {
      // The data is gone either way; other processes' caches then expire with their own TTLs.
      deps.logger.error("could not announce an end-user erasure", { accountId, error });
    });
  }
  return {
    externalId: input.externalId,
    erased: true,
    deleted: erased.deleted,
    erasedAt: new Date().toISOString(),
  };
}
