import type { Database } from "../../../db/client";
import type { TenantContext } from "../../../http/tenant";
import { notFound } from "../../../shared/errors";
import type { Assignment, RunningExperiments } from "../../experiments/running";
import { productLookupQuery } from "../../products/queries";
import { rank, searchesAhead } from "../ranking/rank";
import { explanationLevelFor, sourceLabels } from "../ranking/rank-items";
import type { ExplanationLevel, RankPlan } from "../ranking/rank-plan";
import type { RespondDeps } from "../respond";
import { answerLabels, renderPage, respond } from "../respond";
import { LISTING_DEFAULT_LIMIT, type RecommendationPage } from "../schemas";
import { noHistory, type UserHistory } from "../serving/history-cache";
import { cachedPlannedPage, PageCache } from "../serving/page-cache";
import type { RecommendationService } from "../serving/service";
import type { ServingView } from "../serving/view";

/** What this use case reads from the app. */
export interface Deps extends RespondDeps {
  readonly database: Database;
  readonly experiments: RunningExperiments;
  readonly recommendations: RecommendationService;
}

export interface SimilarInput {
  externalProductId: string;
  skip?: number;
  limit?: number;
  includeExplanation?: boolean;
  explanationLevel?: ExplanationLevel;
  /** Only assigns an experiment arm; the answer does not depend on the end user. */
  externalUserId?: string | undefined;
}

/** Similar items are nobody's in particular: one shared empty history (the ranker memoises per history). */
const NO_HISTORY: UserHistory = noHistory();

/**
 * Products similar to one product: collaborative and content similarity from the model, or category and
 * brand closeness without one. The product itself is left out; no end-user history filter applies. An
 * unknown or soft-deleted product (or one of another account) is a 404. Answers from the model's table are
 * served again from the page cache while it is unchanged.
 */
export function listSimilar({
  ctx,
  deps,
  input,
}: {
  ctx: TenantContext;
  deps: Deps;
  input: SimilarInput;
}): RecommendationPage | Promise<RecommendationPage> {
  const service = deps.recommendations;
  const assignment = deps.experiments.assign(ctx.accountId, ENDPOINT, input.externalUserId);
  const modelId = assignment?.modelId;
  // A product of a tenant in memory is answered without waiting (and often from the page cache).
  const state = service.servingState(ctx.accountId, undefined, modelId);
  const item = state instanceof Promise ? undefined : liveItem(state.view, input.externalProductId);
  if (!(state instanceof Promise) && item !== undefined) {
    return answer(ctx, deps, input, state.view, item, true, assignment);
  }
  return (async () => {
    let view: ServingView = (await state).view;
    let item = liveItem(view, input.externalProductId);
    if (item !== undefined) return answer(ctx, deps, input, view, item, true, assignment);
    // A product created after the model was trained is not in the snapshot: rank it over the product rows.
    const [row] = await productLookupQuery(deps.database.db, ctx.accountId, input.externalProductId);
    if (row === undefined) throw notFound("Product");
    view = { table: await service.catalogue.get(ctx.accountId), signals: null };
    item = view.table.indexOf.get(input.externalProductId);
    if (item === undefined) throw notFound("Product");
    return answer(ctx, deps, input, view, item, false, assignment);
  })();
}

function liveItem(view: ServingView, externalId: string): number | undefined {
  const item = view.table.indexOf.get(externalId);
  return item !== undefined && view.table.deleted[item] !== 1 ? item : undefined;
}

/** `cacheable`: the answer comes from the model's table (not the product rows of a newer product). */
function answer(
  ctx: TenantContext,
  deps: Deps,
  input: SimilarInput,
  view: ServingView,
  item: number,
  cacheable: boolean,
  assignment: Assignment | undefined,
): RecommendationPage | Promise<RecommendationPage> {
  const service = deps.recommendations;
  const labels =
    assignment === undefined
      ? answerLabels(ENDPOINT)
      : answerLabels(ENDPOINT, null, null, { id: assignment.experimentId, arm: assignment.arm });
  const modelVersion = view.snapshot?.version ?? null;
  // Not keyed by the end user: the listing is everyone's (the user only picks the arm, hence the model).
  const { externalUserId: _, ...request } = input;
  // Publishable-key calls get generic reasons whatever level they asked for, and share a page with those.
  const explanation =
    input.includeExplanation === true ? explanationLevelFor(ctx, input.explanationLevel ?? "simple") : null;
  const key = PageCache.key(
    ctx.accountId,
    "",
    ENDPOINT,
    `${view.snapshot?.modelId}|${explanation}|${JSON.stringify(request)}`,
  );
  const inputs = { history: null, view, tuning: service.tuning };
  const skip = input.skip ?? 0;
  const limit = input.limit ?? LISTING_DEFAULT_LIMIT;
  const plan = (): RankPlan => ({
    table: view.table,
    signals: view.signals,
    history: NO_HISTORY,
    weights: { similar: 1, trend: 0.01 },
    goal: "user_engagement",
    diverse: false,
    sourceItems: [item],
    complementAnchors: [],
    exclude: [item],
    excludeHistory: false,
    predicate: null,
    inStockOnly: false,
    maxPrice: null,
    skip,
    limit,
    explanation,
    require: "similar",
    label: { ...sourceLabels("hybrid"), trend: "similar" },
    tuning: service.tuning,
  });
  const render = (planned: RankPlan) => renderPage(ENDPOINT, null, rank(planned), skip, limit);
  if (!cacheable) return respond(deps, ctx.accountId, render(plan()), labels, modelVersion);
  const page = cachedPlannedPage(service.pages, key, inputs, plan, searchesAhead, render);
  if (page instanceof Promise)
    return page.then((done) => respond(deps, ctx.accountId, done, labels, modelVersion));
  return respond(deps, ctx.accountId, page, labels, modelVersion);
}

const ENDPOINT = "products/similar";
