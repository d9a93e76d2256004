import { DEFAULT_BULK_RATE, FREE_PLAN, isPaidPlan } from "./catalog";
import type { PlanTableType, PlanType } from "./schemas";

type PlanDeps = { readonly plans: Readonly<PlanTableType> };

/**
 * The plan an account's plan name stands for. A name the table no longer has (PLANS_FILE changed) gets
 * FREE, so an account is never left without limits.
 */
export function planOf(deps: PlanDeps, accountPlanName: string): PlanType {
  return deps.plans[accountPlanName] ?? deps.plans[FREE_PLAN]!;
}

export interface AccountPlanState {
  readonly plan: string;
  readonly subscriptionStatus: string;
}

/** A paid plan whose subscription lapsed: API use is refused and FREE limits apply to what remains. */
export function subscriptionLapsed(deps: PlanDeps, account: AccountPlanState): boolean {
  return account.subscriptionStatus === "lapsed" && isPaidPlan(planOf(deps, account.plan));
}

/** The limits actually in force: FREE while a paid subscription is lapsed. */
export function effectivePlan(deps: PlanDeps, account: AccountPlanState): PlanType {
  return subscriptionLapsed(deps, account) ? planOf(deps, FREE_PLAN) : planOf(deps, account.plan);
}

export function bulkRateOf(plan: PlanType): { perMinute: number; perHour: number; perDay: number } {
  return {
    perMinute: plan.limits.bulkPerMinute ?? DEFAULT_BULK_RATE.perMinute,
    perHour: plan.limits.bulkPerHour ?? DEFAULT_BULK_RATE.perHour,
    perDay: plan.limits.bulkPerDay ?? DEFAULT_BULK_RATE.perDay,
  };
}
