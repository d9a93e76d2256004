import type { Database } from "../../../db/client";
import { PRESET_DEFAULT_LIMIT, type Preset, presetWeights } from "../../../engine/ranking/strategy";
import type { TenantContext } from "../../../http/tenant";
import { notFound } from "../../../shared/errors";
import type { Assignment, RunningExperiments } from "../../experiments/running";
import { productLookupQuery } from "../../products/queries";
import { rank, searchesAhead } from "../ranking/rank";
import { explanationLevelFor, sourceLabels } from "../ranking/rank-items";
import type { RankPlan } from "../ranking/rank-plan";
import type { RespondDeps } from "../respond";
import { answerLabels, renderPage, respond } from "../respond";
import type { PresetBody, RecommendationPage } from "../schemas";
import type { UserHistory } from "../serving/history-cache";
import type { ItemTable } from "../serving/item-table";
import { cachedPlannedPage, PageCache } from "../serving/page-cache";
import type { RecommendationService } from "../serving/service";
import type { ServingView } from "../serving/view";
import { recentAnchors } from "./query-personalized";

/** What this use case reads from the app. */
export interface Deps extends RespondDeps {
  readonly database: Database;
  readonly experiments: RunningExperiments;
  readonly recommendations: RecommendationService;
}

export interface PresetInput {
  preset: Preset;
  body: PresetBody;
  /** product-page: the product being viewed (external id). */
  currentProductId?: string;
  /** cart: the cart's products (external ids); unknown ids are ignored. */
  cartItems?: readonly string[];
  /** checkout: caps prices at 30% of it when given. */
  orderValue?: number;
}

/** Quick-add items at checkout cost at most this share of the order. */
export const CHECKOUT_PRICE_SHARE = 0.3;

/**
 * The e-commerce presets. All leave out everything the user interacted with (purchases of any age
 * included) and soft-deleted products. homepage: relevance, in stock, no explanations. product-page:
 * similar to the current product, which is excluded, with explanations. cart: bought-together with the cart,
 * cart items excluded, in stock. checkout: cheap, popular, in-stock add-ons priced ≤ 30% of order_value.
 * Identical requests are answered from the page cache while their inputs hold.
 */
export function recommendPreset({
  ctx,
  deps,
  input,
}: {
  ctx: TenantContext;
  deps: Deps;
  input: PresetInput;
}): RecommendationPage | Promise<RecommendationPage> {
  // A running experiment's arm may pin a model version and ask for the diverse re-ranking.
  const assignment = deps.experiments.assign(
    ctx.accountId,
    `ecommerce/${input.preset}`,
    input.body.external_user_id,
  );
  // A returning user of a tenant in memory is answered without waiting (and often from the page cache).
  const state = deps.recommendations.servingState(
    ctx.accountId,
    input.body.external_user_id,
    assignment?.modelId,
  );
  if (!(state instanceof Promise) && !outsideTable(state.view.table, input)) {
    return answer(ctx, deps, input, state.view, state.history, assignment);
  }
  return (async () => {
    const { view, history } = await state;
    if (outsideTable(view.table, input)) {
      // Not in the model's table: a product created after training is fine, an unknown one is a 404.
      const [row] = await productLookupQuery(deps.database.db, ctx.accountId, input.currentProductId!);
      if (row === undefined) throw notFound("Product");
    }
    return answer(ctx, deps, input, view, history, assignment);
  })();
}

/** A preset's ranking, and whether its answer may be kept in the page cache. */
interface PresetPlan {
  ranking: RankPlan;
  cacheable: boolean;
}

/** A live product of the table, by external id. */
function live(table: ItemTable, externalId: string): number | undefined {
  const item = table.indexOf.get(externalId);
  return item !== undefined && table.deleted[item] !== 1 ? item : undefined;
}

/** The product page of a product the table does not know: the database must say whether it exists. */
function outsideTable(table: ItemTable, input: PresetInput): boolean {
  return (
    input.preset === "product-page" &&
    input.currentProductId !== undefined &&
    live(table, input.currentProductId) === undefined
  );
}

function answer(
  ctx: TenantContext,
  deps: Deps,
  input: PresetInput,
  view: ServingView,
  history: UserHistory,
  assignment: Assignment | undefined,
): RecommendationPage | Promise<RecommendationPage> {
  const service = deps.recommendations;
  const { table, signals } = view;
  const endpoint = `ecommerce/${input.preset}`;
  const explanation = input.preset === "homepage" ? null : explanationLevelFor(ctx, "simple");
  const diverse = assignment?.overrides.model_variant === "diverse";
  const labels =
    assignment === undefined
      ? answerLabels(endpoint)
      : answerLabels(endpoint, null, assignment.overrides.model_variant ?? null, {
          id: assignment.experimentId,
          arm: assignment.arm,
        });
  const modelVersion = view.snapshot?.version ?? null;
  // The level is part of the key: a page explained for a secret key must never reach a publishable one.
  const key = PageCache.key(
    ctx.accountId,
    input.body.external_user_id,
    endpoint,
    JSON.stringify([
      input.body,
      input.currentProductId,
      input.cartItems,
      input.orderValue,
      explanation,
      diverse,
      view.snapshot?.modelId,
    ]),
  );
  const inputs = { history, view, tuning: service.tuning };
  const limit = input.body.limit ?? PRESET_DEFAULT_LIMIT[input.preset];
  const plan = (): PresetPlan => {
    const hasHistory = history.events.some((e) => table.indexOf.has(e.externalProductId));
    // The product page of a product created after training (checked in the database) is not cached.
    let cacheable = true;
    let sourceItems: number[] = [];
    let complementAnchors: number[] = [];
    const exclude: number[] = [];
    if (input.preset === "product-page" && input.currentProductId !== undefined) {
      const current = live(table, input.currentProductId);
      if (current === undefined) cacheable = false;
      else {
        sourceItems = [current];
        exclude.push(current);
      }
    } else if (input.preset === "cart") {
      for (const id of input.cartItems ?? []) {
        const item = table.indexOf.get(id);
        if (item !== undefined) exclude.push(item);
        const alive = live(table, id);
        if (alive !== undefined) sourceItems.push(alive);
      }
      complementAnchors = sourceItems;
    } else if (input.preset === "checkout") {
      complementAnchors = recentAnchors(history, table.indexOf);
    }
    const ranking: RankPlan = {
      table,
      signals,
      history,
      weights: presetWeights(input.preset, hasHistory, view.signals?.tuned ?? null),
      goal: input.preset === "checkout" ? "conversion" : "user_engagement",
      diverse,
      sourceItems,
      complementAnchors,
      exclude,
      excludeHistory: true,
      predicate: null,
      inStockOnly: input.preset !== "product-page",
      maxPrice:
        input.preset === "checkout" && input.orderValue !== undefined
          ? CHECKOUT_PRICE_SHARE * input.orderValue
          : null,
      skip: 0,
      limit,
      explanation,
      label: sourceLabels("hybrid"),
      tuning: service.tuning,
    };
    return { ranking, cacheable };
  };
  const page = cachedPlannedPage(
    service.pages,
    key,
    inputs,
    plan,
    (planned) => searchesAhead(planned.ranking),
    (planned) => renderPage(endpoint, history.endUserId, rank(planned.ranking), 0, limit),
    (planned) => planned.cacheable,
  );
  if (page instanceof Promise)
    return page.then((done) => respond(deps, ctx.accountId, done, labels, modelVersion));
  return respond(deps, ctx.accountId, page, labels, modelVersion);
}
