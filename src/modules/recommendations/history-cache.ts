/**
 * The end user's profile and latest interactions, cached per (account, user): the one piece of per-request
 * state the recommender cannot take from the snapshot. Entries are dropped when the user interacts (so the
 * next answer folds the new interaction in) or is erased, and expire after a short TTL so a change made
 * through another process is seen within seconds.
 */
import { sql } from "drizzle-orm";
import type { Database } from "../../db/client";

/** Latest interactions fed to fold-in: enough for a stable vector, small enough to read in one indexed scan. */
export const HISTORY_LENGTH = 200;
const TTL_MS = 30_000;
const MAX_ENTRIES = 50_000;

export interface HistoryEvent {
  externalProductId: string;
  /** Upper-case interaction type: VIEW, CLICK, CART, PURCHASE, RATING, LIKE, DISLIKE, SEARCH. */
  type: string;
  value: number;
  occurredAt: number;
}

export interface UserHistory {
  /** end_users.id, or null when the end user does not exist in the account (treated as a cold user). */
  endUserId: number | null;
  preferredCategories: readonly string[];
  priceRangeMin: number | null;
  priceRangeMax: number | null;
  /** Newest first; the latest HISTORY_LENGTH interactions. */
  events: readonly HistoryEvent[];
  /** Every product the user ever bought (presets never push these again, however old the purchase). */
  purchased: readonly string[];
}

interface Entry {
  value: Promise<UserHistory>;
  loadedAt: number;
}

export class HistoryCache {
  private readonly entries = new Map<string, Entry>();

  constructor(private readonly database: Database) {}

  get(accountId: number, externalUserId: string): Promise<UserHistory> {
    const key = cacheKey(accountId, externalUserId);
    const now = Date.now();
    const hit = this.entries.get(key);
    if (hit !== undefined && now - hit.loadedAt < TTL_MS) {
      // Re-insert to keep Map order as LRU order.
      this.entries.delete(key);
      this.entries.set(key, hit);
      return hit.value;
    }
    const value = loadHistory(this.database, accountId, externalUserId);
    const entry = { value, loadedAt: now };
    this.entries.set(key, entry);
    value.catch(() => {
      if (this.entries.get(key) === entry) this.entries.delete(key);
    });
    if (this.entries.size > MAX_ENTRIES) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
    return value;
  }

  /** The user's data changed: the next request reads it again. */
  invalidate(accountId: number, externalUserId: string): void {
    this.entries.delete(cacheKey(accountId, externalUserId));
  }

  invalidateAccount(accountId: number): void {
    const prefix = `${accountId}\u0000`;
    for (const key of this.entries.keys()) if (key.startsWith(prefix)) this.entries.delete(key);
  }

  clear(): void {
    this.entries.clear();
  }
}

const cacheKey = (accountId: number, externalUserId: string) => `${accountId}\u0000${externalUserId}`;

interface Row {
  end_user_id: number | string | null;
  preferred_categories: unknown;
  price_range_min: number | null;
  price_range_max: number | null;
  external_product_id: string | null;
  interaction_type: string | null;
  value: number | null;
  occurred_at: Date | string | null;
  purchased: unknown;
}

/** One round trip: the user row joined with its latest interactions (interactions_account_user_time_idx). */
async function loadHistory(
  database: Database,
  accountId: number,
  externalUserId: string,
): Promise<UserHistory> {
  const rows = await database.rows<Row>(sql`
    select u.id as end_user_id, u.preferred_categories, u.price_range_min, u.price_range_max,
           h.external_product_id, h.interaction_type, h.value, h.occurred_at,
           (select coalesce(jsonb_agg(distinct p2.external_id), '[]'::jsonb)
              from interactions i2 join products p2 on p2.id = i2.product_id
              where i2.account_id = ${accountId} and i2.end_user_id = u.id
                and i2.interaction_type = 'PURCHASE') as purchased
    from end_users u
    left join lateral (
      select p.external_id as external_product_id, i.interaction_type, i.value, i.occurred_at
      from interactions i
      join products p on p.id = i.product_id and p.account_id = i.account_id
      where i.account_id = ${accountId} and i.end_user_id = u.id
      order by i.occurred_at desc, i.id desc
      limit ${HISTORY_LENGTH}
    ) h on true
    where u.account_id = ${accountId} and u.external_id = ${externalUserId}`);
  const first = rows[0];
  if (first === undefined || first.end_user_id === null) {
    return {
      endUserId: null,
      preferredCategories: [],
      priceRangeMin: null,
      priceRangeMax: null,
      events: [],
      purchased: [],
    };
  }
  const events: HistoryEvent[] = [];
  for (const row of rows) {
    if (row.external_product_id === null || row.interaction_type === null) continue;
    events.push({
      externalProductId: row.external_product_id,
      type: row.interaction_type,
      value: Number(row.value ?? 1),
      occurredAt: new Date(row.occurred_at ?? 0).getTime(),
    });
  }
  const preferred = stringArray(first.preferred_categories);
  return {
    endUserId: Number(first.end_user_id),
    preferredCategories: preferred,
    priceRangeMin: first.price_range_min === null ? null : Number(first.price_range_min),
    priceRangeMax: first.price_range_max === null ? null : Number(first.price_range_max),
    events,
    purchased: stringArray(first.purchased),
  };
}

/** jsonb arrives parsed from PGlite and, depending on the driver's settings, as text from postgres.js. */
function stringArray(value: unknown): string[] {
  const raw = typeof value === "string" ? (JSON.parse(value) as unknown) : value;
  return Array.isArray(raw) ? raw.filter((c): c is string => typeof c === "string") : [];
}
