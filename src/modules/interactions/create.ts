import { and, eq, isNull } from "drizzle-orm";
import type { AppEvents } from "../../app-events";
import type { Database } from "../../db/client";
import { interactions, orders, products, searches } from "../../db/schema";
import { notFound, validationError } from "../../shared/errors";
import { ensureEndUsers } from "../end-users/ensure";
import { assertCatalogueCapacityIn } from "../plans/limits";
import type { PlanTableType } from "../plans/schemas";
import type { KnownUserWriter } from "./known-user-writes";
import type { Interaction, InteractionCreate } from "./schemas";

/** How far in the future a client clock may be before its timestamp is refused. */
export const MAX_FUTURE_SKEW_MS = 5 * 60 * 1000;

/**
 * Why a timestamp cannot be recorded, if it cannot: before 1970 (the format admits year 0000 and dates
 * Postgres cannot store) or more than 5 minutes ahead of our clock.
 */
export function timestampProblem(at: Date, now: number): string | undefined {
  const time = at.getTime();
  if (Number.isNaN(time)) return "must be a valid ISO 8601 date-time";
  if (time < 0) return "must not be before 1970-01-01";
  if (time > now + MAX_FUTURE_SKEW_MS) return "must not be more than 5 minutes in the future";
  return undefined;
}

/**
 * Records one interaction. The end user is created when unknown; the product must be live. A PURCHASE also
 * writes an order and a SEARCH a search row, in the same transaction, so erasure and export see all of it.
 */
export async function createInteraction({
  ctx,
  deps,
  input,
}: {
  ctx: { readonly accountId: number };
  deps: {
    readonly database: Database;
    readonly plans: Readonly<PlanTableType>;
    readonly events: Pick<AppEvents, "interactionsRecorded">;
    readonly interactionWrites: Pick<KnownUserWriter, "record">;
  };
  input: InteractionCreate;
}): Promise<Interaction> {
  const type = input.interaction_type.toUpperCase();
  const occurredAt = input.timestamp === undefined ? new Date() : new Date(input.timestamp);
  const problem = timestampProblem(occurredAt, Date.now());
  if (problem !== undefined) {
    throw validationError([{ loc: ["body", "timestamp"], msg: problem, type: "value_error.timestamp" }]);
  }
  const value = input.value ?? 1;
  const accountId = ctx.accountId;

  // The common case (a known end user, a live product, no order or search row) is one row, written with
  // the interactions arriving beside it (see known-user-writes.ts); the transaction below covers the rest.
  const recorded =
    (type === "PURCHASE" || type === "SEARCH"
      ? undefined
      : await deps.interactionWrites.record({
          accountId,
          externalUserId: input.external_user_id,
          externalProductId: input.external_product_id,
          type,
          value,
          query: input.query ?? null,
          occurredAt,
        })) ??
    (await deps.database.db.transaction(async (tx) => {
      // Only what recording needs of the live product (a whole row carries its description and attributes).
      const [product] = await tx
        .select({ id: products.id, price: products.price })
        .from(products)
        .where(
          and(
            eq(products.accountId, accountId),
            eq(products.externalId, input.external_product_id),
            isNull(products.deletedAt),
          ),
        )
        .limit(1);
      if (product === undefined) throw notFound("Product");
      // A user the shop never sent is created here, and counts against the plan's end users like any other.
      const userIds = await ensureEndUsers(tx, accountId, [input.external_user_id], async (missing) => {
        await assertCatalogueCapacityIn(deps, tx, accountId, "endUsers", missing.length);
        return missing;
      });
      const endUserId = userIds.get(input.external_user_id);
      if (endUserId === undefined) throw new Error("end user vanished while recording an interaction");
      const [row] = await tx
        .insert(interactions)
        .values({
          accountId,
          endUserId,
          productId: product.id,
          interactionType: type,
          value,
          query: input.query ?? null,
          occurredAt,
        })
        .returning({ id: interactions.id });
      if (row === undefined) throw new Error("interaction insert returned no row");
      if (type === "PURCHASE") {
        await tx.insert(orders).values({
          accountId,
          endUserId,
          productId: product.id,
          // A PURCHASE's value is what was paid, as its credited revenue: one order of that amount.
          quantity: 1,
          unitPrice: input.value ?? product.price,
          occurredAt,
        });
      } else if (type === "SEARCH") {
        await tx
          .insert(searches)
          .values({ accountId, endUserId, productId: product.id, query: input.query ?? null, occurredAt });
      }
      return { id: row.id, endUserId, productId: product.id, price: product.price };
    }));

  deps.events.interactionsRecorded.emit({
    accountId,
    endUserId: recorded.endUserId,
    externalUserId: input.external_user_id,
    interactions: [
      {
        productId: recorded.productId,
        externalProductId: input.external_product_id,
        interactionType: type,
        value,
        occurredAt,
        revenue: type === "PURCHASE" ? (input.value ?? recorded.price ?? 0) : 0,
        ...(input.recommendation_id === undefined ? {} : { recommendationId: input.recommendation_id }),
      },
    ],
  });
  return {
    id: recorded.id,
    external_user_id: input.external_user_id,
    external_product_id: input.external_product_id,
    interaction_type: type,
    value,
    timestamp: occurredAt.toISOString(),
    ...(input.query !== undefined ? { query: input.query } : {}),
  };
}
