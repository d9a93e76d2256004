import { eq } from "drizzle-orm";
import { accounts } from "../../db/schema";
import type { AppDeps } from "../../deps";
import type { TenantContext } from "../../http/auth";
import { notFound } from "../../shared/errors";
import type { AccountOutput } from "./schemas";

export async function getCurrentAccount({ ctx, deps }: { ctx: TenantContext; deps: AppDeps }) {
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
