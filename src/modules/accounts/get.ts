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
    isActive: row.isActive,
    plan: row.plan,
    subscriptionStatus: row.subscriptionStatus,
    onboardingChecklistStatus: row.onboardingChecklistStatus,
    paymentCustomerId: row.paymentCustomerId,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}
