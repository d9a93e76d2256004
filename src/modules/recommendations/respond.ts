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
  /** Approximate size of the body and its JSON text in bytes (the page cache's budget). */
  bytes: number;
}

/**
 * The JSON text of each rendered body, made once with the page: a page served again from the page cache is
 * sent as that text (see `preRenderedJson`) instead of being serialised again for every response.
 */
const jsonOfBody = new WeakMap<object, string>();

/** The JSON text of a body `renderPage` made, for the route's response mapping; undefined for anything else. */
export function preRenderedJson(value: unknown): string | undefined {
  return typeof value === "object" && value !== null ? jsonOfBody.get(value) : undefined;
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
  const body = { items: page.items, total: page.total, skip, limit };
  const json = JSON.stringify(body);
  jsonOfBody.set(body, json);
  return {
    endpoint,
    endUserId,
    itemIds: page.items.map((item) => item.externalId),
    body,
    bytes: bytes + json.length,
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
