/** A user's history read from the database, one statement per user (see history-cache.ts). */
import { sql } from "drizzle-orm";
import type { Database } from "../../../db/client";
import { HISTORY_LENGTH, type HistoryEvent, noHistory, type UserHistory } from "./user-history";

interface Row {
  end_user_id: number | string;
  preferred_categories: unknown;
  price_range_min: number | null;
  price_range_max: number | null;
  /** JSON array of [product, type, value, occurredAt epoch ms], newest first; product: external id or id. */
  events: unknown;
  /** Every product interacted with, distinct: external ids, or ids. */
  interacted: unknown;
}

/**
 * One round trip, one row: the user with their latest interactions (interactions_account_user_time_idx) and
 * every product they ever interacted with, the lists aggregated to JSON by the database so a long history costs one parse
 * instead of a decoded row (and date) per interaction. Products come as ids named from the model's table
 * when it knows them all (the usual case), else as external ids joined in by the database. Times are
 * date_part's float8 epoch, not extract's numeric one (a third of the cost on PGlite), and the bulk read of
 * history-preload.ts uses the same expression, so both say the same time to the bit.
 */
export async function loadHistory(
  database: Database,
  accountId: number,
  externalUserId: string,
  externalIdOf: ((productId: number) => string | undefined) | undefined,
): Promise<UserHistory> {
  if (externalIdOf !== undefined) {
    const [row] = await database.rows<Row>(sql`
      select u.id as end_user_id, u.preferred_categories, u.price_range_min, u.price_range_max,
             (select coalesce(json_agg(json_build_array(h.product_id, h.interaction_type, h.value, h.at)
                                       order by h.occurred_at desc, h.id desc), '[]'::json)
                from (select i.product_id, i.interaction_type, i.value, i.occurred_at, i.id,
                             date_part('epoch', i.occurred_at) * 1000 as at
                        from interactions i
                       where i.account_id = ${accountId} and i.end_user_id = u.id
                       order by i.occurred_at desc, i.id desc
                       limit ${HISTORY_LENGTH}) h) as events,
             (select coalesce(json_agg(distinct i2.product_id), '[]'::json)
                from interactions i2
               where i2.account_id = ${accountId} and i2.end_user_id = u.id) as interacted
      from end_users u
      where u.account_id = ${accountId} and u.external_id = ${externalUserId}`);
    if (row === undefined) return noHistory();
    const named = toHistory(row, (product) =>
      typeof product === "number" ? externalIdOf(product) : undefined,
    );
    // A product the model does not know (created after its training): let the database name them all.
    if (named !== undefined) return named;
  }
  const [row] = await database.rows<Row>(sql`
    select u.id as end_user_id, u.preferred_categories, u.price_range_min, u.price_range_max,
           (select coalesce(json_agg(json_build_array(h.external_id, h.interaction_type, h.value, h.at)
                                     order by h.occurred_at desc, h.id desc), '[]'::json)
              from (select p.external_id, i.interaction_type, i.value, i.occurred_at, i.id,
                           date_part('epoch', i.occurred_at) * 1000 as at
                      from interactions i
                      join products p on p.id = i.product_id and p.account_id = i.account_id
                     where i.account_id = ${accountId} and i.end_user_id = u.id
                     order by i.occurred_at desc, i.id desc
                     limit ${HISTORY_LENGTH}) h) as events,
           (select coalesce(json_agg(distinct p2.external_id), '[]'::json)
              from interactions i2 join products p2 on p2.id = i2.product_id
             where i2.account_id = ${accountId} and i2.end_user_id = u.id) as interacted
    from end_users u
    where u.account_id = ${accountId} and u.external_id = ${externalUserId}`);
  if (row === undefined) return noHistory();
  return toHistory(row, (product) => (typeof product === "string" ? product : undefined))!;
}

/** The row as a history, each product named by `name`; undefined when a product has no name. */
function toHistory(row: Row, name: (product: unknown) => string | undefined): UserHistory | undefined {
  const events: HistoryEvent[] = [];
  for (const entry of jsonArray(row.events)) {
    if (!Array.isArray(entry)) continue;
    const [product, type, value, occurredAt] = entry as unknown[];
    const externalProductId = name(product);
    if (externalProductId === undefined) return undefined;
    if (typeof type !== "string") continue;
    events.push({
      externalProductId,
      type,
      value: value === null || value === undefined ? 1 : Number(value),
      occurredAt: Number(occurredAt ?? 0),
    });
  }
  const interacted: string[] = [];
  for (const product of jsonArray(row.interacted)) {
    const externalProductId = name(product);
    if (externalProductId === undefined) return undefined;
    interacted.push(externalProductId);
  }
  return {
    endUserId: Number(row.end_user_id),
    preferredCategories: stringArray(row.preferred_categories),
    priceRangeMin: row.price_range_min === null ? null : Number(row.price_range_min),
    priceRangeMax: row.price_range_max === null ? null : Number(row.price_range_max),
    events,
    interacted,
  };
}

/** JSON arrives parsed from PGlite and, depending on the driver's settings, as text from postgres.js. */
function jsonArray(value: unknown): unknown[] {
  const raw = typeof value === "string" ? (JSON.parse(value) as unknown) : value;
  return Array.isArray(raw) ? raw : [];
}

function stringArray(value: unknown): string[] {
  return jsonArray(value).filter((c): c is string => typeof c === "string");
}
