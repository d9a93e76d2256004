/**
 * The set-based writes of one ingestion chunk: every statement handles the whole chunk (multi-row INSERT,
 * `ON CONFLICT … DO UPDATE`, bulk id lookups), inside the caller's transaction.
 */
import { and, eq, inArray, isNull, sql } from "drizzle-orm";
import type { Tx } from "../../db/client";
import { numberArray, textArray } from "../../db/pg-array";
import type { IngestionRecordError } from "../../db/schema";
import { endUsers, products } from "../../db/schema";
import { ensureEndUsers } from "../end-users/ensure";
import type { RecordedInteraction } from "../interactions/events";
import { type Checked, checkInteraction, checkProduct, checkUser, recordKey } from "./validate";

export interface ChunkResult {
  errors: IngestionRecordError[];
  /** External ids of products written (for cache invalidation). */
  productIds: string[];
  /** External ids of end users created or updated from user records (for cache invalidation). */
  endUserIds: string[];
  /** New interactions per end user (for the recommender's fold-in refresh). */
  interactionsByUser: Map<number, { externalUserId: string; interactions: RecordedInteraction[] }>;
}

type RecordType = "product" | "user" | "interaction";

/** Room the account's plan leaves for new records of a kind (read in the chunk's transaction). */
export type CapacityCheck = (
  tx: Tx,
  accountId: number,
  kind: "products" | "endUsers",
) => Promise<{ remaining: number; max: number; plan: string }>;

/**
 * Keeps updates of existing records and as many new ones as the plan has room for; the rest become
 * record errors, so a batch past the cap applies what fits instead of failing whole.
 */
async function withinCapacity<T extends { externalId: string }>(
  tx: Tx,
  accountId: number,
  type: "product" | "user",
  rows: T[],
  existing: (ids: string[]) => Promise<Set<string>>,
  capacity: CapacityCheck | undefined,
  errors: IngestionRecordError[],
): Promise<T[]> {
  if (capacity === undefined || rows.length === 0) return rows;
  const known = await existing(rows.map((r) => r.externalId));
  const fresh = rows.filter((r) => !known.has(r.externalId));
  const room = await capacity(tx, accountId, type === "product" ? "products" : "endUsers");
  if (fresh.length <= room.remaining) return rows;
  const refused = new Set(fresh.slice(room.remaining).map((r) => r.externalId));
  for (const id of refused) {
    errors.push({
      recordType: type,
      externalId: id,
      errorMessage: `plan limit exceeded: the ${room.plan} plan allows ${room.max} ${type === "product" ? "products" : "end users"}`,
    });
  }
  return rows.filter((r) => !refused.has(r.externalId));
}

/**
 * Valid records with their positions in the request's array (`offset` is the chunk's start), and an error
 * naming the position of each invalid one: two bad `u1:p2` interactions are told apart by their index.
 */
function validateAll<T>(
  type: RecordType,
  records: readonly unknown[],
  check: (r: unknown) => Checked<T>,
  offset: number,
) {
  const valid: T[] = [];
  const positions: number[] = [];
  const errors: IngestionRecordError[] = [];
  records.forEach((record, i) => {
    // Removed by an erasure after the request was accepted (see StoredBatch): skipped without a record
    // error. It is no fault of the batch, and an error would have to name the end user who asked to be
    // forgotten (their external id), or point at their record.
    if (record === null) return;
    const checked = check(record);
    if (checked.ok) {
      valid.push(checked.value);
      positions.push(offset + i);
    } else {
      errors.push({
        recordType: type,
        externalId: recordKey(type, record),
        index: offset + i,
        errorMessage: checked.message,
      });
    }
  });
  return { valid, positions, errors };
}

/** Within one INSERT a key may appear once (ON CONFLICT cannot touch a row twice): the last record wins. */
function lastPerKey<T>(records: T[], key: (r: T) => string): T[] {
  return [...new Map(records.map((r) => [key(r), r])).values()];
}

const emptyResult = (errors: IngestionRecordError[]): ChunkResult => ({
  errors,
  productIds: [],
  endUserIds: [],
  interactionsByUser: new Map(),
});

export async function applyProducts(
  tx: Tx,
  accountId: number,
  records: readonly unknown[],
  capacity?: CapacityCheck,
  offset = 0,
): Promise<ChunkResult> {
  const { valid, errors } = validateAll("product", records, checkProduct, offset);
  const candidates = lastPerKey(valid, (p) => p.externalId).map((p) => ({
    accountId,
    externalId: p.externalId,
    name: p.name,
    description: p.description ?? null,
    price: p.price,
    category: p.category,
    brand: p.brand ?? null,
    inStock: p.inStock ?? true,
    attributes: p.attributes ?? {},
  }));
  const rows = await withinCapacity(
    tx,
    accountId,
    "product",
    candidates,
    async (ids) => {
      const live = await tx
        .select({ externalId: products.externalId })
        .from(products)
        .where(
          and(
            eq(products.accountId, accountId),
            inArray(products.externalId, ids),
            isNull(products.deletedAt),
          ),
        );
      return new Set(live.map((r) => r.externalId));
    },
    capacity,
    errors,
  );
  if (rows.length > 0) {
    await tx
      .insert(products)
      .values(rows)
      .onConflictDoUpdate({
        target: [products.accountId, products.externalId],
        set: {
          name: sql`excluded.name`,
          description: sql`excluded.description`,
          price: sql`excluded.price`,
          category: sql`excluded.category`,
          brand: sql`excluded.brand`,
          inStock: sql`excluded.in_stock`,
          attributes: sql`excluded.attributes`,
          // A soft-deleted product named again is revived as a new product.
          createdAt: sql`case when ${products.deletedAt} is null then ${products.createdAt} else now() end`,
          deletedAt: null,
          updatedAt: sql`now()`,
        },
      });
  }
  return { ...emptyResult(errors), productIds: rows.map((r) => r.externalId) };
}

export async function applyUsers(
  tx: Tx,
  accountId: number,
  records: readonly unknown[],
  capacity?: CapacityCheck,
  offset = 0,
): Promise<ChunkResult> {
  const { valid, errors } = validateAll("user", records, checkUser, offset);
  const candidates = lastPerKey(valid, (u) => u.externalId).map((u) => ({
    accountId,
    externalId: u.externalId,
    preferredCategories: u.preferredCategories ?? [],
    priceRangeMin: u.priceRangeMin ?? null,
    priceRangeMax: u.priceRangeMax ?? null,
    attributes: u.attributes ?? {},
  }));
  const rows = await withinCapacity(
    tx,
    accountId,
    "user",
    candidates,
    async (ids) => {
      const present = await tx
        .select({ externalId: endUsers.externalId })
        .from(endUsers)
        .where(and(eq(endUsers.accountId, accountId), inArray(endUsers.externalId, ids)));
      return new Set(present.map((r) => r.externalId));
    },
    capacity,
    errors,
  );
  if (rows.length > 0) {
    await tx
      .insert(endUsers)
      .values(rows)
      .onConflictDoUpdate({
        target: [endUsers.accountId, endUsers.externalId],
        set: {
          preferredCategories: sql`excluded.preferred_categories`,
          priceRangeMin: sql`excluded.price_range_min`,
          priceRangeMax: sql`excluded.price_range_max`,
          attributes: sql`excluded.attributes`,
          updatedAt: sql`now()`,
        },
      });
  }
  return { ...emptyResult(errors), endUserIds: rows.map((r) => r.externalId) };
}

/**
 * Interactions of the chunk whose product exists; an end user named for the first time is created and
 * counts against the plan's maxEndUsers: past it, that user's interactions become record errors.
 */
export async function applyInteractions(
  tx: Tx,
  accountId: number,
  records: readonly unknown[],
  now: number,
  capacity?: CapacityCheck,
  offset = 0,
): Promise<ChunkResult> {
  const checked = validateAll("interaction", records, (r) => checkInteraction(r, now), offset);
  const { errors } = checked;
  const valid = checked.valid.map((interaction, k) => ({ ...interaction, index: checked.positions[k]! }));
  const result = emptyResult(errors);
  if (valid.length === 0) return result;

  const wantedProducts = [...new Set(valid.map((i) => i.externalProductId))];
  const productRows = await tx
    .select({ id: products.id, externalId: products.externalId, price: products.price })
    .from(products)
    .where(
      and(
        eq(products.accountId, accountId),
        sql`${products.externalId} = any(${textArray(wantedProducts)}::text[])`,
        isNull(products.deletedAt),
      ),
    );
  const productByExternalId = new Map(productRows.map((p) => [p.externalId, p]));
  const known = valid.filter((i) => {
    if (productByExternalId.has(i.externalProductId)) return true;
    errors.push({
      recordType: "interaction",
      externalId: `${i.externalUserId}:${i.externalProductId}`,
      index: i.index,
      errorMessage: `external_product_id: product "${i.externalProductId}" not found`,
    });
    return false;
  });
  if (known.length === 0) return result;

  let refusal: string | undefined;
  const userIds = await ensureEndUsers(
    tx,
    accountId,
    known.map((i) => i.externalUserId),
    capacity &&
      (async (missing) => {
        const room = await capacity(tx, accountId, "endUsers");
        if (missing.length <= room.remaining) return missing;
        refusal = `plan limit exceeded: the ${room.plan} plan allows ${room.max} end users`;
        return missing.slice(0, room.remaining);
      }),
  );
  const rows: { i: (typeof known)[number]; product: (typeof productRows)[number]; endUserId: number }[] = [];
  for (const i of known) {
    const endUserId = userIds.get(i.externalUserId);
    if (endUserId === undefined) {
      if (refusal === undefined) throw new Error(`end user ${i.externalUserId} could not be created`);
      errors.push({
        recordType: "interaction",
        externalId: `${i.externalUserId}:${i.externalProductId}`,
        index: i.index,
        errorMessage: refusal,
      });
      continue;
    }
    rows.push({ i, product: productByExternalId.get(i.externalProductId)!, endUserId });
  }
  if (rows.length === 0) return result;
  // One statement per table whatever the chunk size: each column is one typed-array parameter.
  await tx.execute(sql`insert into interactions
      (account_id, end_user_id, product_id, interaction_type, value, query, occurred_at)
    select ${accountId}, r.end_user_id, r.product_id, r.interaction_type, r.value, r.query, r.occurred_at
    from unnest(
      ${numberArray(rows.map((r) => r.endUserId))}::bigint[],
      ${numberArray(rows.map((r) => r.product.id))}::bigint[],
      ${textArray(rows.map((r) => r.i.type))}::text[],
      ${numberArray(rows.map((r) => r.i.value))}::float8[],
      ${textArray(rows.map((r) => r.i.query))}::text[],
      ${textArray(rows.map((r) => r.i.occurredAt.toISOString()))}::timestamptz[]
    ) as r(end_user_id, product_id, interaction_type, value, query, occurred_at)`);
  const purchases = rows.filter((r) => r.i.type === "PURCHASE");
  if (purchases.length > 0) {
    await tx.execute(sql`insert into orders
        (account_id, end_user_id, product_id, quantity, unit_price, occurred_at)
      select ${accountId}, r.end_user_id, r.product_id, r.quantity, r.unit_price, r.occurred_at
      from unnest(
        ${numberArray(purchases.map((r) => r.endUserId))}::bigint[],
        ${numberArray(purchases.map((r) => r.product.id))}::bigint[],
        ${numberArray(purchases.map(() => 1))}::float8[],
        ${numberArray(purchases.map((r) => r.i.sentValue ?? r.product.price))}::float8[],
        ${textArray(purchases.map((r) => r.i.occurredAt.toISOString()))}::timestamptz[]
      ) as r(end_user_id, product_id, quantity, unit_price, occurred_at)`);
  }
  const searchRows = rows.filter((r) => r.i.type === "SEARCH");
  if (searchRows.length > 0) {
    await tx.execute(sql`insert into searches (account_id, end_user_id, product_id, query, occurred_at)
      select ${accountId}, r.end_user_id, r.product_id, r.query, r.occurred_at
      from unnest(
        ${numberArray(searchRows.map((r) => r.endUserId))}::bigint[],
        ${numberArray(searchRows.map((r) => r.product.id))}::bigint[],
        ${textArray(searchRows.map((r) => r.i.query))}::text[],
        ${textArray(searchRows.map((r) => r.i.occurredAt.toISOString()))}::timestamptz[]
      ) as r(end_user_id, product_id, query, occurred_at)`);
  }
  for (const { i, product, endUserId } of rows) {
    let entry = result.interactionsByUser.get(endUserId);
    if (entry === undefined) {
      entry = { externalUserId: i.externalUserId, interactions: [] };
      result.interactionsByUser.set(endUserId, entry);
    }
    entry.interactions.push({
      productId: product.id,
      externalProductId: i.externalProductId,
      interactionType: i.type,
      value: i.value,
      occurredAt: i.occurredAt,
      revenue: i.type === "PURCHASE" ? (i.sentValue ?? product.price) : 0,
      ...(i.recommendationId === undefined ? {} : { recommendationId: i.recommendationId }),
    });
  }
  return result;
}
