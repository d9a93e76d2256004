import { eq } from "drizzle-orm";
import type { Database } from "../../db/client";
import { accounts } from "../../db/schema";
import type { TenantContext } from "../../http/tenant";
import { notFound } from "../../shared/errors";
import type { AccountOutput } from "./schemas";

/** What this use case reads from the app. */
export interface Deps {
  readonly database: Database;
}

export async function getCurrentAccount({ ctx, deps }: { ctx: TenantContext; deps: Deps }) {
  const [row] = await deps.database.db.select().from(accounts).where(eq(accounts.id, ctx.accountId));
  if (row === undefined) throw notFound("Account");
  return toAccountOutput(row);
}

export function toAccountOutput(row: typeof accounts.$inferSelect): AccountOutput {
  return {
    accountId: row.id,
    name: row.name,
    is_active: row.isActive,
    onboarding_checklist_status: row.onboardingChecklistStatus,
    payment_customer_id: row.paymentCustomerId,
    plan: row.plan,
    subscriptionStatus: row.subscriptionStatus,
    subscriptionRenewsAt: row.subscriptionRenewsAt?.toISOString() ?? null,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}
