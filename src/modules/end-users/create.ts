import type { AppEvents } from "../../app-events";
import type { Database } from "../../db/client";
import { endUsers } from "../../db/schema";
import { AppError, validationError } from "../../shared/errors";
import { assertCatalogueCapacityIn } from "../plans/limits";
import type { PlanTableType } from "../plans/schemas";
import { toEndUser } from "./record";
import type { EndUser, EndUserCreate } from "./schemas";

/** A price range whose minimum exceeds its maximum is a validation error, not something to store. */
export function priceRangeProblem(input: {
  priceRangeMin?: number;
  priceRangeMax?: number;
}): string | undefined {
  const { priceRangeMin: min, priceRangeMax: max } = input;
  return min !== undefined && max !== undefined && min > max
    ? "priceRangeMin must not be greater than priceRangeMax"
    : undefined;
}

/**
 * Creates an end user; an externalId already in use answers 409 CONFLICT (bulk ingestion upserts instead).
 * Announced as an update: an answer given before for that id was for nobody, and is asked again.
 */
export async function createEndUser({
  ctx,
  deps,
  input,
}: {
  ctx: { readonly accountId: number };
  deps: {
    readonly database: Database;
    readonly plans: Readonly<PlanTableType>;
    readonly events: Pick<AppEvents, "endUserUpdated">;
  };
  input: EndUserCreate;
}): Promise<EndUser> {
  const problem = priceRangeProblem(input);
  if (problem !== undefined) {
    throw validationError([{ loc: ["body", "priceRangeMin"], msg: problem, type: "value_error.range" }]);
  }
  const row = await deps.database.db.transaction(async (tx) => {
    await assertCatalogueCapacityIn(deps, tx, ctx.accountId, "endUsers", 1);
    const [created] = await tx
      .insert(endUsers)
      .values({
        accountId: ctx.accountId,
        externalId: input.externalId,
        preferredCategories: input.preferredCategories ?? [],
        priceRangeMin: input.priceRangeMin ?? null,
        priceRangeMax: input.priceRangeMax ?? null,
        attributes: input.attributes ?? {},
      })
      .onConflictDoNothing({ target: [endUsers.accountId, endUsers.externalId] })
      .returning();
    return created;
  });
  if (row === undefined) {
    throw new AppError("CONFLICT", `An end user with externalId "${input.externalId}" already exists`);
  }
  deps.events.endUserUpdated.emit({ accountId: ctx.accountId, externalId: row.externalId });
  return toEndUser(row);
}
