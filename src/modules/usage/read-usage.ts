import { and, eq, gte, lte } from "drizzle-orm";
import type { Database } from "../../db/client";
import { accounts, usageDaily } from "../../db/schema";
import type { Logger } from "../../shared/logger";
import type { UsageMeter } from "../../shared/usage-meter";
import { emptyCounts, type UsageCounts } from "../../shared/usage-meter";

type ReadDeps = { readonly database: Database; readonly usageMeter: UsageMeter; readonly logger: Logger };

/**
 * Usage rows for a range of UTC days (inclusive). What is still counted in memory or Redis is flushed
 * first, so a report includes the request that asked for it.
 */
export async function readUsageDays(
  deps: ReadDeps,
  accountId: number,
  fromDay: string,
  toDay: string,
): Promise<Map<string, UsageCounts>> {
  try {
    await deps.usageMeter.flush();
  } catch (error) {
    // The report is still useful without the last few seconds; the next flush retries them.
    deps.logger.warn("usage flush before report failed", { error });
  }
  const rows = await deps.database.db
    .select({
      day: usageDaily.day,
      requests: usageDaily.requests,
      recommendations: usageDaily.recommendations,
      ingestedRecords: usageDaily.ingestedRecords,
      trainings: usageDaily.trainings,
    })
    .from(usageDaily)
    .where(
      and(eq(usageDaily.accountId, accountId), gte(usageDaily.day, fromDay), lte(usageDaily.day, toDay)),
    );
  return new Map(rows.map(({ day, ...counts }) => [day, counts]));
}

export function sumCounts(days: Iterable<UsageCounts>): UsageCounts {
  const total = emptyCounts();
  for (const day of days) {
    total.requests += day.requests;
    total.recommendations += day.recommendations;
    total.ingestedRecords += day.ingestedRecords;
    total.trainings += day.trainings;
  }
  return total;
}

export async function subscriptionRenewsAt(
  deps: { readonly database: Database },
  accountId: number,
): Promise<Date | null> {
  const [row] = await deps.database.db
    .select({ renewsAt: accounts.subscriptionRenewsAt })
    .from(accounts)
    .where(eq(accounts.id, accountId));
  return row?.renewsAt ?? null;
}

export const addDays = (day: string, days: number): string =>
  new Date(Date.parse(`${day}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);
