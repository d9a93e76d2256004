import { strategyWeights } from "../../../engine/ranking/strategy";
import { daypartOf } from "../../../engine/ranking/time-of-day";
import type { TenantContext } from "../../../http/tenant";
import type { Assignment, RunningExperiments } from "../../experiments/running";
import { compileFilters, needsAttributes } from "../ranking/filters";
import { rank, searchesAhead } from "../ranking/rank";
import { explanationLevelFor, sourceLabels } from "../ranking/rank-items";
import type { RankPlan } from "../ranking/rank-plan";
import type { RespondDeps } from "../respond";
import { answerLabels, renderPage, respond } from "../respond";
import { LISTING_DEFAULT_LIMIT, type PersonalizedQuery, type RecommendationPage } from "../schemas";
import type { UserHistory } from "../serving/history-cache";
import { cachedPlannedPage, PageCache } from "../serving/page-cache";
import type { RecommendationService } from "../serving/service";
import type { ServingView } from "../serving/view";

/** What this use case reads from the app. */
export interface Deps extends RespondDeps {
  readonly experiments: RunningExperiments;
  readonly recommendations: RecommendationService;
}

/**
 * The personalised feed. The user's vector is folded in from their latest interactions at request time;
 * products they already interacted with are left out; a user unknown to the account is served as a cold
 * user (popularity, then catalogue order), never a 404. With a trained model, `context.time_of_day` leans
 * the popularity signal towards what sells at that time of day; `context.location` is accepted but has no
 * signal to act on (no place is stored with products or interactions). An identical
 * request whose inputs have not changed since is answered from the page cache.
 */
export function queryPersonalized({
  ctx,
  deps,
  input,
}: {
  ctx: TenantContext;
  deps: Deps;
  input: PersonalizedQuery;
}): RecommendationPage | Promise<RecommendationPage> {
  // A running experiment's arm sets its parameters (a pinned model version among them, which also keys the
  // page cache); a request naming its own model variant is served as asked, outside the experiment.
  const assignment =
    input.model_variant === undefined
      ? deps.experiments.assign(ctx.accountId, ENDPOINT, input.external_user_id)
      : undefined;
  if (assignment !== undefined) input = { ...input, ...assignment.overrides };
  // A returning user of a tenant in memory is answered without waiting (and often from the page cache).
  const state = deps.recommendations.servingState(ctx.accountId, input.external_user_id, assignment?.modelId);
  if (!(state instanceof Promise) && !needsAttributes(input.filters)) {
    return answer(ctx, deps, input, state.view, state.history, [], assignment);
  }
  return (async () => {
    const { view, history } = await state;
    const attributes = needsAttributes(input.filters) ? await view.table.attributes() : [];
    return answer(ctx, deps, input, view, history, attributes, assignment);
  })();
}

function answer(
  ctx: TenantContext,
  deps: Deps,
  input: PersonalizedQuery,
  view: ServingView,
  history: UserHistory,
  attributes: readonly (Record<string, unknown> | undefined)[],
  assignment: Assignment | undefined,
): RecommendationPage | Promise<RecommendationPage> {
  const service = deps.recommendations;
  const { table, signals } = view;
  const daypart = daypartOf(input.context?.time_of_day);
  const explanation = input.include_explanation === true ? explanationLevelFor(ctx, "simple") : null;
  // The level is part of the key: a page explained for a secret key must never reach a publishable one.
  const key = PageCache.key(
    ctx.accountId,
    input.external_user_id,
    ENDPOINT,
    `${explanation}|${requestKey(input, daypart)}`,
  );
  const inputs = { history, view, tuning: service.tuning };
  const limit = input.limit ?? LISTING_DEFAULT_LIMIT;
  const skip = input.skip ?? 0;
  const plan = (): RankPlan => {
    const predicate = compileFilters(input.filters, table, attributes);
    const strategy = input.strategy ?? "hybrid";
    const goal = input.recommendation_goal ?? "user_engagement";
    const sourceId = input.context?.source_external_product_id;
    const sourceItem = sourceId === undefined ? undefined : table.indexOf.get(sourceId);
    const source = sourceItem !== undefined && table.deleted[sourceItem] !== 1 ? [sourceItem] : [];
    const hasHistory = history.events.some((e) => table.indexOf.has(e.externalProductId));
    const complementAnchors = goal === "conversion" ? recentAnchors(history, table.indexOf) : [];
    const popularity = daypart === null ? null : (signals?.daypartPopularity(daypart) ?? null);
    return {
      table,
      signals,
      history,
      weights: strategyWeights(strategy, goal, hasHistory, source.length > 0, signals?.tuned ?? null),
      goal,
      diverse: input.model_variant === "diverse",
      sourceItems: source,
      complementAnchors,
      exclude: [],
      excludeHistory: true,
      predicate,
      filterKey: input.filters === undefined ? null : JSON.stringify(input.filters),
      inStockOnly: false,
      maxPrice: null,
      skip,
      limit,
      explanation,
      label: sourceLabels(strategy),
      tuning: service.tuning,
      ...(popularity === null ? {} : { popularity }),
    };
  };
  const page = cachedPlannedPage(service.pages, key, inputs, plan, searchesAhead, (planned) =>
    renderPage(ENDPOINT, history.endUserId, rank(planned), skip, limit),
  );
  const labels = answerLabels(
    ENDPOINT,
    input.strategy ?? "hybrid",
    input.model_variant ?? "standard",
    assignment === undefined ? null : { id: assignment.experimentId, arm: assignment.arm },
  );
  const version = view.snapshot?.version ?? null;
  if (page instanceof Promise)
    return page.then((done) => respond(deps, ctx.accountId, done, labels, version));
  return respond(deps, ctx.accountId, page, labels, version);
}

const ENDPOINT = "personalized/query";

/**
 * The request as the page cache tells answers apart: a time of day counts by the daypart it falls in (a
 * client sending the current time with every request would otherwise never meet its earlier answers).
 */
function requestKey(input: PersonalizedQuery, daypart: number | null): string {
  if (input.context?.time_of_day === undefined) return JSON.stringify(input);
  return JSON.stringify({ ...input, context: { ...input.context, time_of_day: daypart } });
}

/** Items the user recently bought or carted: anchors for "often bought together". */
export function recentAnchors(
  history: { events: readonly { externalProductId: string; type: string }[] },
  indexOf: ReadonlyMap<string, number>,
  max = 10,
): number[] {
  const anchors: number[] = [];
  for (const event of history.events) {
    if (event.type !== "PURCHASE" && event.type !== "CART") continue;
    const item = indexOf.get(event.externalProductId);
    if (item !== undefined && !anchors.includes(item)) anchors.push(item);
    if (anchors.length >= max) break;
  }
  return anchors;
}
