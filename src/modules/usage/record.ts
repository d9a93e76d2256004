import type { UsageCounts, UsageMeter } from "../../shared/usage-meter";

/**
 * Counts work done for an account today (UTC): recommendation responses served, records ingested,
 * training runs started. Cheap and synchronous; the meter flushes to usage_daily in batches. Requests are
 * counted by the plan guard and need no call.
 */
export function recordUsage(
  deps: { readonly usageMeter: UsageMeter },
  accountId: number,
  counts: Partial<Pick<UsageCounts, "recommendations" | "ingestedRecords" | "trainings">>,
): void {
  deps.usageMeter.record(accountId, counts);
}
