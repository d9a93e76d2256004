/**
 * What every recommendation response does after ranking: the page is put in its response shape once (and
 * may be served again from the page cache), what was shown is logged for the end user (batched, off the hot
 * path; only end users that exist) and the response is counted in the account's usage.
 */
import type { AppDeps } from "../../deps";
import { recordUsage } from "../usage/record";
import type { RankedPage } from "./rank";
import type { RecommendationPage } from "./schemas";

/** A recommendation answer ready to send: its body and what the recommendation log records. */
export interface RenderedPage {
  endpoint: string;
  endUserId: number | null;
  itemIds: readonly string[];
  body: RecommendationPage;
  /** Approximate size of the body in bytes (the page cache's budget). */
  bytes: number;
}

export function renderPage(
  endpoint: string,
  endUserId: number | null,
  page: RankedPage,
  skip: number,
  limit: number,
): RenderedPage {
  let bytes = 64;
  for (const item of page.items) {
    bytes += 64 + item.externalId.length + item.name.length + (item.explanation?.length ?? 0);
  }
  return {
    endpoint,
    endUserId,
    itemIds: page.items.map((item) => item.externalId),
    body: { items: page.items, total: page.total, skip, limit },
    bytes,
  };
}

/** Logs and counts the answer, and returns its body. */
export function respond(
  deps: Pick<AppDeps, "recommendations" | "usageMeter">,
  accountId: number,
  page: RenderedPage,
): RecommendationPage {
  if (page.endUserId !== null && page.itemIds.length > 0) {
    deps.recommendations.logs.enqueue({
      accountId,
      endUserId: page.endUserId,
      endpoint: page.endpoint,
      items: page.itemIds,
    });
  }
  recordUsage(deps, accountId, { recommendations: 1 });
  return page.body;
}
