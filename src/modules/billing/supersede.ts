/**
 * An account pays for one subscription at a time. When a newer subscription is authorised (a plan change),
 * the account's older subscriptions still authorised are marked superseded in the same transaction, and
 * cancelled with the provider once it has committed, so a plan change never leaves the payer charged twice
 * and a late webhook of the old subscription cannot switch the plan back. A cancellation the provider could
 * not take now stays superseded and is retried by the sweeper.
 */
import { and, eq, inArray, ne } from "drizzle-orm";
import type { Tx } from "../../db/client";
import { billingSessions } from "../../db/schema";
import type { BillingDeps } from "./configured";
import type { PaymentProvider } from "./provider";

/** Marks the account's other authorised subscriptions superseded; answers their provider ids. */
export async function supersedeOlderSubscriptions(
  tx: Tx,
  session: { id: number; accountId: number; provider: string },
): Promise<string[]> {
  const rows = await tx
    .update(billingSessions)
    .set({ status: "superseded", updatedAt: new Date() })
    .where(
      and(
        eq(billingSessions.accountId, session.accountId),
        eq(billingSessions.provider, session.provider),
        eq(billingSessions.status, "authorized"),
        inArray(billingSessions.kind, ["subscription", "checkout"]),
        ne(billingSessions.id, session.id),
      ),
    )
    .returning({ externalId: billingSessions.externalId });
  return rows.map((row) => row.externalId);
}

/**
 * Cancels superseded subscriptions with the provider: the given ones, or every one still waiting (the
 * sweeper's retry). Answers how many were cancelled; a failure is logged and left for the next try.
 */
export async function cancelSuperseded(
  deps: Pick<BillingDeps, "database" | "logger"> & { payments: PaymentProvider },
  externalIds?: readonly string[],
): Promise<number> {
  const ids =
    externalIds ??
    (
      await deps.database.db
        .select({ externalId: billingSessions.externalId })
        .from(billingSessions)
        .where(
          and(eq(billingSessions.provider, deps.payments.name), eq(billingSessions.status, "superseded")),
        )
        .limit(100)
    ).map((row) => row.externalId);
  let cancelled = 0;
  for (const externalId of ids) {
    try {
      await deps.payments.cancelSubscription(externalId);
    } catch (error) {
      deps.logger.warn("could not cancel a superseded subscription; retrying later", {
        provider: deps.payments.name,
        error,
      });
      continue;
    }
    await deps.database.db
      .update(billingSessions)
      .set({ status: "cancelled", updatedAt: new Date() })
      .where(
        and(
          eq(billingSessions.provider, deps.payments.name),
          eq(billingSessions.externalId, externalId),
          inArray(billingSessions.status, ["superseded", "cancelled"]),
        ),
      );
    cancelled++;
  }
  return cancelled;
}
