import { sql } from "drizzle-orm";
import type { Database } from "../../../db/client";
import { normalizeCategory } from "../../../engine/ranking/catalogue";
import type { TenantContext } from "../../../http/tenant";
import type { RunningExperiments } from "../../experiments/running";
import type { RespondDeps } from "../respond";
import { answerLabels, renderPage, respond } from "../respond";
import { LISTING_DEFAULT_LIMIT, type RecommendationItem, type RecommendationPage } from "../schemas";
import type { ExtraProduct } from "../serving/catalogue-extras";
import { POPULARITY_SQL } from "../serving/catalogue-loader";
import { listCategoryFromSnapshot } from "../serving/category-snapshot";
import { cachedPage, PageCache } from "../serving/page-cache";
import type { RecommendationService } from "../serving/service";
import type { CategorySort } from "../serving/serving-cache";
import type { ServingView } from "../serving/view";

/** What this use case reads from the app. */
export interface Deps extends RespondDeps {
  readonly database: Database;
  readonly experiments: RunningExperiments;
  readonly recommendations: RecommendationService;
}

export type { CategorySort };

export interface CategoryInput {
  category: string;
  sortBy?: CategorySort;
  skip?: number;
  limit?: number;
  /** Only assigns an experiment arm; the listing does not depend on the end user. */
  externalUserId?: string | undefined;
}

interface Row {
  external_id: string;
  name: string;
  price: number | string;
  popularity: number | string | null;
  rating: number | string | null;
  total: number | string;
}

const ORDER: Record<CategorySort, ReturnType<typeof sql.raw>> = {
  popularity: sql.raw("popularity desc nulls last, p.id asc"),
  rating: sql.raw("rating desc nulls last, popularity desc nulls last, p.id asc"),
  price_asc: sql.raw("p.price asc, p.id asc"),
  price_desc: sql.raw("p.price desc, p.id asc"),
};

/**
 * Live products of a category and its sub-categories. With a trained model they come from the snapshot's
 * cached category order (trained popularity and mean rating) plus the products created since training;
 * without one from the product rows, where popularity is the 7-day-decayed interaction weight. Rating is
 * the mean RATING value (unrated products last). No history filter applies.
 */
export function listCategory({
  ctx,
  deps,
  input,
}: {
  ctx: TenantContext;
  deps: Deps;
  input: CategoryInput;
}): RecommendationPage | Promise<RecommendationPage> {
  const category = normalizeCategory(input.category);
  const sortBy = input.sortBy ?? "popularity";
  const skip = input.skip ?? 0;
  const limit = input.limit ?? LISTING_DEFAULT_LIMIT;
  const request = { category, sortBy, skip, limit };
  const service = deps.recommendations;
  const assignment = deps.experiments.assign(ctx.accountId, ENDPOINT, input.externalUserId);
  const modelId = assignment?.modelId;
  const labels =
    assignment === undefined
      ? answerLabels(ENDPOINT)
      : answerLabels(ENDPOINT, null, null, { id: assignment.experimentId, arm: assignment.arm });
  // With a model in memory and its newer products known, no waiting (and often the page cache).
  const view = service.viewNow(ctx.accountId, modelId);
  const newer = view?.snapshot && service.extras.loaded(view.snapshot);
  if (view !== undefined && newer !== undefined) {
    return fromSnapshot(ctx, deps, view, newer, request, labels);
  }
  return (async () => {
    const view = await service.view(ctx.accountId, modelId);
    if (view.snapshot !== undefined) {
      return fromSnapshot(ctx, deps, view, await service.extras.get(view.snapshot), request, labels);
    }
    return fromProductRows(ctx, deps, request, labels);
  })();
}

type Labels = ReturnType<typeof answerLabels>;

interface CategoryRequest {
  category: string;
  sortBy: CategorySort;
  skip: number;
  limit: number;
}

/** With a model: the snapshot's cached category order, no SQL per request; pages cached while it holds. */
function fromSnapshot(
  ctx: TenantContext,
  deps: Deps,
  view: ServingView,
  newer: readonly ExtraProduct[],
  { category, sortBy, skip, limit }: CategoryRequest,
  labels: Labels,
): RecommendationPage {
  const service = deps.recommendations;
  const key = PageCache.key(
    ctx.accountId,
    "",
    ENDPOINT,
    `${view.snapshot?.modelId}|${sortBy}|${skip}|${limit}|${category}`,
  );
  const inputs = { history: null, view, tuning: service.tuning, newer };
  const page = cachedPage(service.pages, key, inputs, () =>
    renderPage(
      ENDPOINT,
      null,
      listCategoryFromSnapshot(view.table, newer, category, sortBy, skip, limit),
      skip,
      limit,
    ),
  );
  return respond(deps, ctx.accountId, page, labels, view.snapshot?.version ?? null);
}

const ENDPOINT = "category";

/** Without a model: the product rows, popularity aggregated from the interactions. */
async function fromProductRows(
  ctx: TenantContext,
  deps: Deps,
  { category, sortBy, skip, limit }: CategoryRequest,
  labels: Labels,
): Promise<RecommendationPage> {
  // The byte range [c/, c0) is every sub-category path ('0' follows '/'), served by the category index.
  const rows = await deps.database.rows<Row>(sql`
    select p.external_id, p.name, p.price, s.popularity, s.rating, count(*) over () as total
    from products p
    left join lateral (
      select sum(${POPULARITY_SQL}) as popularity,
             avg(i.value) filter (where i.interaction_type = 'RATING') as rating
      from interactions i
      where i.account_id = ${ctx.accountId} and i.product_id = p.id
    ) s on true
    where p.account_id = ${ctx.accountId} and p.deleted_at is null
      and (p.category = ${category} or (p.category ~>=~ ${`${category}/`} and p.category ~<~ ${`${category}0`}))
    order by ${ORDER[sortBy]}
    offset ${skip} limit ${limit}`);
  let total = rows.length > 0 ? Number(rows[0]!.total) : 0;
  if (rows.length === 0 && skip > 0) {
    const [count] = await deps.database.rows<{ total: number | string }>(sql`
      select count(*) as total from products p
      where p.account_id = ${ctx.accountId} and p.deleted_at is null
        and (p.category = ${category} or (p.category ~>=~ ${`${category}/`} and p.category ~<~ ${`${category}0`}))`);
    total = Number(count?.total ?? 0);
  }
  const items = rows.map((row): RecommendationItem => {
    const popularity = row.popularity === null ? 0 : Number(row.popularity);
    const rating = row.rating === null ? 0 : Number(row.rating);
    const price = Number(row.price);
    const score = sortBy === "rating" ? rating : sortBy === "popularity" ? popularity : price;
    return {
      externalId: row.external_id,
      name: row.name,
      score: Math.round(score * 1e6) / 1e6,
      source: "popular",
    };
  });
  const page = renderPage(ENDPOINT, null, { items, total }, skip, limit);
  return respond(deps, ctx.accountId, page, labels);
}
