/**
 * What every recommendation response does after ranking: log what was shown to the end user (batched, off
 * the hot path; only end users that exist) and count it in the account's usage.
 */
import type { AppDeps } from "../../deps";
import { recordUsage } from "../usage/record";
import type { RankedPage } from "./rank";
import type { RecommendationPage } from "./schemas";

export function respond(
  deps: Pick<AppDeps, "recommendations" | "usageMeter">,
  accountId: number,
  endpoint: string,
  endUserId: number | null,
  page: RankedPage,
  skip: number,
  limit: number,
): RecommendationPage {
  if (endUserId !== null && page.items.length > 0) {
    deps.recommendations.logs.enqueue({
      accountId,
      endUserId,
      endpoint,
      items: page.items.map((item) => item.externalId),
    });
  }
  recordUsage(deps, accountId, { recommendations: 1 });
  return { items: page.items, total: page.total, skip, limit };
}
