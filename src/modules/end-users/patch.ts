import { and, eq, sql } from "drizzle-orm";
import type { AppEvents } from "../../app-events";
import type { Database } from "../../db/client";
import { endUsers } from "../../db/schema";
import { notFound, validationError } from "../../shared/errors";
import { toEndUser } from "./record";
import type { EndUser, EndUserPatch } from "./schemas";

/**
 * Partial update of an end user's profile: only the fields given change; `null` clears a price bound. The
 * price range is checked as it will be stored (a new minimum against the stored maximum too), in the same
 * statement, so a concurrent update cannot leave min > max.
 */
export async function patchEndUser({
  ctx,
  deps,
  input,
}: {
  ctx: { readonly accountId: number };
  deps: { readonly database: Database; readonly events: Pick<AppEvents, "endUserUpdated"> };
  input: { externalId: string; changes: EndUserPatch };
}): Promise<EndUser> {
  const { changes } = input;
  const row = await deps.database.db.transaction(async (tx) => {
    const [current] = await tx
      .select({ min: endUsers.priceRangeMin, max: endUsers.priceRangeMax })
      .from(endUsers)
      .where(and(eq(endUsers.accountId, ctx.accountId), eq(endUsers.externalId, input.externalId)))
      .for("update");
    if (current === undefined) throw notFound("End user");
    const min = changes.priceRangeMin === undefined ? current.min : changes.priceRangeMin;
    const max = changes.priceRangeMax === undefined ? current.max : changes.priceRangeMax;
    if (min !== null && max !== null && min > max) {
      const field = changes.priceRangeMin === undefined ? "priceRangeMax" : "priceRangeMin";
      throw validationError([
        {
          loc: ["body", field],
          msg: `priceRangeMin (${min}) must not be greater than priceRangeMax (${max})`,
          type: "value_error.range",
        },
      ]);
    }
    const [updated] = await tx
      .update(endUsers)
      .set({
        ...(changes.preferredCategories !== undefined && {
          preferredCategories: changes.preferredCategories,
        }),
        ...(changes.priceRangeMin !== undefined && { priceRangeMin: changes.priceRangeMin }),
        ...(changes.priceRangeMax !== undefined && { priceRangeMax: changes.priceRangeMax }),
        ...(changes.attributes !== undefined && { attributes: changes.attributes }),
        updatedAt: sql`now()`,
      })
      .where(and(eq(endUsers.accountId, ctx.accountId), eq(endUsers.externalId, input.externalId)))
      .returning();
    return updated;
  });
  if (row === undefined) throw notFound("End user");
  deps.events.endUserUpdated.emit({ accountId: ctx.accountId, externalId: row.externalId });
  return toEndUser(row);
}
