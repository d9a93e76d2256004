/**
 * What every recommendation response does after ranking: the page is put in its response shape once (and
 * may be served again from the page cache); every sending of it gets a `recommendationId` of its own, under
 * which what was shown is logged (batched, off the hot path; for the end user when there is one, who must
 * still exist) for export, erasure and online evaluation; and the response is counted in the account's usage.
 */
import { TypeCompiler } from "@sinclair/typebox/compiler";
import { t, ValidationError } from "elysia";
import { attached } from "../../shared/attached";
import type { UsageMeter } from "../../shared/usage-meter";
import { recordUsage } from "../usage/record";
import { type RankedPage, RecommendationPage } from "./schemas";
import { type AnswerLabels, itemListJson, type RecommendationLogQueue } from "./serving/log-queue";
import type { RenderedPage } from "./serving/page-cache";

/** What sending an answer reads from the app: the recommendation log and the usage counters. */
export interface RespondDeps {
  readonly recommendations: { readonly logs: RecommendationLogQueue };
  readonly usageMeter: UsageMeter;
}

/**
 * The JSON text of each rendered body, made once with the page: a page served again from the page cache is
 * sent as that text (see `preRenderedJson`) instead of being serialised again for every response.
 */
const jsonOfBody = attached<object, string>("rendered JSON");

/** The JSON text of a body `renderPage` made, for the route's response mapping; undefined for anything else. */
export function preRenderedJson(value: unknown): string | undefined {
  return typeof value === "object" && value !== null ? jsonOfBody.get(value) : undefined;
}

/**
 * The response schema without what each sending adds. The route sends a rendered page's JSON text as it is,
 * past Elysia's check of every response, so the body is checked here, once, when the page is made; what a
 * sending adds (`recommendationId`, a UUID, and an experiment's labels) is made by `respond` from values of
 * the schema's types. A body that fails is our bug: it is refused as Elysia refuses one (the kernel logs
 * where it failed and answers 500).
 */
const RENDERED_BODY = TypeCompiler.Compile(t.Omit(RecommendationPage, ["recommendationId", "experiment"]));

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
  if (!RENDERED_BODY.Check(body)) throw new ValidationError("response", RENDERED_BODY, body);
  const json = JSON.stringify(body);
  jsonOfBody.set(body, json);
  const itemIds = page.items.map((item) => item.externalId);
  // The list's JSON for the recommendation log, made while its ids are hot (see `itemListJson`).
  if (itemIds.length > 0) itemListJson(itemIds);
  return { endpoint, endUserId, itemIds, body, bytes: bytes + json.length };
}

/**
 * The labels of each grouping, made once: the log queue numbers a batch's groupings by object (see
 * log-queue.ts), and a request finds its grouping's labels with one map lookup.
 */
const knownLabels = new Map<string, AnswerLabels>();

export function answerLabels(
  endpoint: string,
  strategy: string | null = null,
  modelVariant: string | null = null,
  experiment: { id: number; arm: string } | null = null,
): AnswerLabels {
  const key = `${endpoint}|${strategy}|${modelVariant}|${experiment?.id}|${experiment?.arm}`;
  let labels = knownLabels.get(key);
  if (labels === undefined) {
    labels = {
      endpoint,
      strategy,
      modelVariant,
      experimentId: experiment?.id ?? null,
      experimentArm: experiment?.arm ?? null,
    };
    knownLabels.set(key, labels);
  }
  return labels;
}

/**
 * Names, logs and counts the answer, and returns its body. The id (and the experiment arm that served it, if
 * any, with the version of the model that ranked it) is spliced into the page's JSON text (made once with the
 * page) rather than serialising the body again.
 */
export function respond(
  deps: RespondDeps,
  accountId: number,
  page: RenderedPage,
  labels: AnswerLabels = answerLabels(page.endpoint),
  modelVersion: number | null = null,
): RecommendationPage {
  const recommendationId = crypto.randomUUID();
  if (page.itemIds.length > 0) {
    deps.recommendations.logs.enqueue({
      accountId,
      endUserId: page.endUserId,
      recommendationId,
      labels,
      items: page.itemIds,
    });
  }
  recordUsage(deps, accountId, { recommendations: 1 });
  const json = jsonOfBody.get(page.body);
  if (labels.experimentId === null) {
    const body: RecommendationPage = { ...page.body, recommendationId };
    if (json !== undefined)
      jsonOfBody.set(body, `${json.slice(0, -1)},"recommendationId":"${recommendationId}"}`);
    return body;
  }
  const experiment = { id: labels.experimentId, variant: labels.experimentArm ?? "", modelVersion };
  const body: RecommendationPage = { ...page.body, recommendationId, experiment };
  if (json !== undefined) {
    jsonOfBody.set(
      body,
      `${json.slice(0, -1)},"recommendationId":"${recommendationId}","experiment":${JSON.stringify(experiment)}}`,
    );
  }
  return body;
}
