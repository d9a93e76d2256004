import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { sql } from "drizzle-orm";
import { DEFAULT_TUNING, type ServingTuning } from "../../src/engine/ranking/candidates";
import { denseHistory } from "../../src/engine/ranking/components";
import type { ModelSignals } from "../../src/engine/ranking/signals";
import { rank, searchesAhead } from "../../src/modules/recommendations/ranking/rank";
import { sourceLabels } from "../../src/modules/recommendations/ranking/rank-items";
import type { RankPlan } from "../../src/modules/recommendations/ranking/rank-plan";
import { contentIndex, factorIndex } from "../../src/modules/recommendations/serving/ann-access";
import { HistoryCache, withInteractions } from "../../src/modules/recommendations/serving/history-cache";
import { HISTORY_CHANNEL } from "../../src/modules/recommendations/serving/history-sync";
import { SimilarLists } from "../../src/modules/recommendations/serving/similar-lists";
import {
  CARRY_SLACK,
  carryCandidates,
  MAX_CARRIED_GENERATIONS,
  MIN_CARRIED_HISTORY,
  userSignals,
} from "../../src/modules/recommendations/serving/user-memo";
import type { HierarchicalNSW } from "../../src/shared/hnswlib";
import { createTestContext, type TestContext } from "../helpers/context";
import { registerTenant, type Tenant } from "../helpers/tenant";
import { FAST_TRAINING, generateTenant, trainAndWait } from "../pipeline/fixtures";
import { ids, interact } from "./fixtures";

// A trained tenant per suite; training and PGlite are slow on shared machines.
setDefaultTimeout(60_000);

const QUERY = "/api/v1/recommendations/personalized/query";
const CATEGORY = "/api/v1/recommendations/category";

let ctx: TestContext;
let tenant: Tenant;

/** The service's candidate thresholds: this suite's own, changed between the two answers it compares. */
const tuning: ServingTuning = { ...DEFAULT_TUNING };

beforeAll(async () => {
  ctx = await createTestContext({}, { servingTuning: tuning });
  tenant = await registerTenant(ctx);
  await generateTenant(ctx, tenant.accountId, { users: 60, interactionsPerUser: 15 });
  const job = await trainAndWait(ctx, tenant.apiKey, FAST_TRAINING);
  expect(job.status).toBe("completed");
}, 180_000);

afterAll(async () => {
  await ctx?.close();
});

type Tuning = { candidateMinItems: number; selectiveMaxItems: number };

/** A personalised query's ranking plan, without filters or exclusions beyond the user's own products. */
function personalPlan(
  given: Pick<RankPlan, "table" | "signals" | "history" | "weights" | "limit"> & Partial<RankPlan>,
): RankPlan {
  return {
    goal: "user_engagement",
    diverse: false,
    sourceItems: [],
    complementAnchors: [],
    exclude: [],
    excludeHistory: true,
    predicate: null,
    inStockOnly: false,
    maxPrice: null,
    skip: 0,
    explanation: null,
    label: sourceLabels("hybrid"),
    ...given,
  };
}

/** The same request answered with every item scored and through the candidate path. */
async function bothPaths(
  method: "GET" | "POST",
  path: string,
  body: Record<string, unknown> | undefined,
  candidatePath: Partial<Tuning>,
) {
  const ask = () => ctx.request(method, path, { apiKey: tenant.apiKey, ...(body ? { body } : {}) });
  try {
    Object.assign(tuning, { candidateMinItems: Number.MAX_SAFE_INTEGER });
    const exact = await ask();
    Object.assign(tuning, { candidateMinItems: 0 }, candidatePath);
    const candidates = await ask();
    expect(exact.status).toBe(200);
    expect(candidates.status).toBe(200);
    return { exact: exact.body, candidates: candidates.body };
  } finally {
    Object.assign(tuning, DEFAULT_TUNING);
  }
}

describe("candidate path (HNSW) versus scoring every item", () => {
  test("the HNSW candidate path returns the same top items and total as exact scoring", async () => {
    const requests: Record<string, unknown>[] = [
      { external_user_id: "u-3", limit: 10 },
      { external_user_id: "u-7", limit: 5, skip: 3, recommendation_goal: "discovery" },
      { external_user_id: "u-11", limit: 10, strategy: "collab" },
      { external_user_id: "u-12", limit: 10, strategy: "content_based" },
      { external_user_id: "u-20", limit: 8, model_variant: "diverse", include_explanation: true },
      { external_user_id: "brand-new-user", limit: 10 },
      { external_user_id: "u-5", limit: 6, context: { source_external_product_id: "p-1-2" } },
    ];
    // selectiveMaxItems 0: no shortcut for small catalogues, every request goes through HNSW.
    const viaAnn = { selectiveMaxItems: 0 };
    for (const body of requests) {
      const { exact, candidates } = await bothPaths("POST", QUERY, body, viaAnn);
      expect(ids(candidates)).toEqual(ids(exact));
      expect(candidates.total).toBe(exact.total);
    }
    const homepage = await bothPaths(
      "POST",
      "/api/v1/recommendations/ecommerce/homepage",
      { external_user_id: "u-9" },
      {},
    );
    expect(ids(homepage.candidates)).toEqual(ids(homepage.exact));
    const similar = await bothPaths(
      "GET",
      "/api/v1/recommendations/products/external/p-2-3/similar?limit=10",
      undefined,
      {},
    );
    expect(ids(similar.candidates)).toEqual(ids(similar.exact));
    expect(similar.candidates.total).toBe(similar.exact.total);
  });

  test("under the candidate thresholds the ranking asks the HNSW index, not a full scan", async () => {
    const service = ctx.deps.recommendations;
    const view = await service.view(tenant.accountId);
    const history = await service.histories.get(tenant.accountId, "u-3");
    expect(view.signals).not.toBeNull();
    const signals = view.signals!;
    let topCalls = 0;
    let scored = 0;
    const counting = Object.create(signals) as typeof signals;
    counting.collaborative = (dense) => {
      const query = signals.collaborative(dense);
      if (query === null) return null;
      const top = (k: number) => {
        topCalls++;
        return query.top(k);
      };
      const score = (item: number) => {
        scored++;
        return query.score(item);
      };
      return { score, top };
    };
    const plan = personalPlan({
      table: view.table,
      signals: counting,
      history,
      weights: { collab: 1 },
      limit: 5,
    });
    const exact = rank({
      ...plan,
      tuning: { candidateMinItems: 1e9, selectiveMaxItems: 0 },
    });
    expect(topCalls).toBe(0);
    scored = 0;
    const viaAnn = rank({
      ...plan,
      tuning: { candidateMinItems: 0, selectiveMaxItems: 0 },
    });
    expect(topCalls).toBe(1);
    // The only signal contributes its best eligible items, twice the page, and only those are scored.
    expect(scored).toBe(2 * plan.limit);
    expect(viaAnn.items.map((i) => i.externalId)).toEqual(exact.items.map((i) => i.externalId));
    expect(viaAnn.total).toBe(exact.total);
  });

  test("an item the HNSW search returned is scored from the similarity the search computed, equal to the dot product", async () => {
    const service = ctx.deps.recommendations;
    const view = await service.view(tenant.accountId);
    const history = await service.histories.get(tenant.accountId, "u-3");
    const dense = denseHistory(view.table, history);
    for (const signal of ["collaborative", "content"] as const) {
      // A query whose search has run scores from what it remembered; a fresh one computes every dot product.
      const searched = view.signals![signal](dense)!;
      const computed = view.signals![signal](dense)!;
      const items = searched.top(15);
      expect(items.length).toBe(15);
      const remembered = new Float32Array(items.length);
      const direct = new Float32Array(items.length);
      searched.scoreInto!(items, remembered);
      computed.scoreInto!(items, direct);
      for (let p = 0; p < items.length; p++) {
        expect(remembered[p]!).toBeCloseTo(direct[p]!, 4);
        expect(direct[p]!).toBeCloseTo(computed.score(items[p]!), 5);
      }
    }
  });

  test("a selective filter is answered by scoring its matches: same items, filter holds, exact total", async () => {
    const filters = {
      logic: "and",
      filters: [
        { field: "category", op: "eq", value: "cat2" },
        { field: "price", op: "lte", value: 15 },
      ],
    };
    const body = { external_user_id: "u-4", limit: 20, filters };
    // Default selectiveMaxItems: the few matches are listed and scored exactly.
    const selective = await bothPaths("POST", QUERY, body, {});
    expect(ids(selective.candidates)).toEqual(ids(selective.exact));
    expect(selective.candidates.total).toBe(selective.exact.total);
    for (const id of ids(selective.candidates)) {
      const [, c, p] = id.split("-");
      expect(c).toBe("2");
      expect(10 + Number(p)).toBeLessThanOrEqual(15);
    }
    // No selective shortcut: HNSW candidates are filtered afterwards, with the same answer.
    const filtered = await bothPaths("POST", QUERY, body, { selectiveMaxItems: 0 });
    expect(ids(filtered.candidates)).toEqual(ids(selective.exact));
    expect(filtered.candidates.total).toBe(selective.exact.total);
  });
});

describe("category listing from the snapshot", () => {
  test("the cached category order follows product updates, deletions and new products", async () => {
    const list = async () => {
      const res = await ctx.request("GET", `${CATEGORY}/cat3`, {
        apiKey: tenant.apiKey,
        query: { sort_by: "price_asc" },
      });
      expect(res.status).toBe(200);
      return res.body;
    };
    const pages = ctx.deps.recommendations.pages;
    const cachedBefore = pages.size;
    const before = await list();
    expect(ids(before)[0]).toBe("p-3-0");
    expect(before.total).toBe(10);
    // Asked again, the same listing is kept in the page cache (from its second computation) and served as is
    // (each sending has a recommendationId of its own).
    const sameListing = ({ recommendationId: _id, ...rest }: Record<string, unknown>) => rest;
    expect(sameListing(await list())).toEqual(sameListing(before));
    expect(pages.size).toBe(cachedBefore + 1);
    expect(sameListing(await list())).toEqual(sameListing(before));
    // A price change reaches the snapshot through its freshness refresh: poll, no timing assumption.
    const put = await ctx.request("PUT", "/api/v1/products/external/p-3-9", {
      apiKey: tenant.apiKey,
      body: { name: "Item 9 of category 3", price: 1, category: "cat3/sub1", brand: "brand0" },
    });
    expect(put.status).toBe(200);
    let after = await list();
    for (let i = 0; i < 200 && ids(after)[0] !== "p-3-9"; i++) {
      await Bun.sleep(50);
      after = await list();
    }
    expect(ids(after)[0]).toBe("p-3-9");
    expect(after.items[0].score).toBe(1);
    const del = await ctx.request("DELETE", "/api/v1/products/external/p-3-0", { apiKey: tenant.apiKey });
    expect(del.status).toBe(204);
    const deleted = await list();
    expect(ids(deleted)).not.toContain("p-3-0");
    expect(deleted.total).toBe(9);
    const created = await ctx.request("POST", "/api/v1/products/", {
      apiKey: tenant.apiKey,
      body: { externalId: "p-3-new", name: "New in 3", price: 0.5, category: "cat3/sub0" },
    });
    expect(created.status).toBe(201);
    const withNew = await list();
    expect(ids(withNew)[0]).toBe("p-3-new");
    expect(withNew.total).toBe(10);
  });
});

describe("history read with the model in memory", () => {
  test("names products from the model as the database would, and asks the database for newer ones", async () => {
    const service = ctx.deps.recommendations;
    await service.view(tenant.accountId);
    const database = ctx.deps.database;
    const statements: string[] = [];
    const rows = database.rows;
    const user = "u-7";
    const read = async () => {
      service.histories.invalidate(tenant.accountId, user);
      statements.length = 0;
      (database as { rows: typeof rows }).rows = (query, on) => {
        // History reads only (one user's, or users' read together on the embedded store): other work of the
        // service (refreshes, flushes) may run meanwhile.
        const text = JSON.stringify(query);
        if (text.includes("as events") || text.includes("u.id) as lines")) statements.push(text);
        return rows(query, on);
      };
      try {
        return await service.histories.get(tenant.accountId, user);
      } finally {
        (database as { rows: typeof rows }).rows = rows;
      }
    };
    const fromModel = await read();
    expect(statements).toHaveLength(1);
    expect(statements[0]).not.toContain("join products");
    // The same history as the database names it (a cache without the model's names joins the products).
    const fromDatabase = await new HistoryCache(database).get(tenant.accountId, user);
    expect(fromModel.events.length).toBeGreaterThan(0);
    expect(fromModel.events).toEqual(fromDatabase.events);
    expect([...fromModel.interacted].sort()).toEqual([...fromDatabase.interacted].sort());
    // A product the model does not know: the read falls back to the database's names.
    const created = await ctx.request("POST", "/api/v1/products/", {
      apiKey: tenant.apiKey,
      body: { externalId: "p-after-training", name: "New", price: 3, category: "cat1" },
    });
    expect(created.status).toBe(201);
    await interact(ctx, tenant, user, "p-after-training", "PURCHASE");
    // Once the model's snapshot has taken the new product in (requests wait for that).
    await ctx.deps.snapshots.getSnapshot(tenant.accountId);
    const withNew = await read();
    expect(statements).toHaveLength(2);
    expect(withNew.events[0]!.externalProductId).toBe("p-after-training");
    expect(withNew.interacted).toContain("p-after-training");
  });
});

describe("history freshness across processes", () => {
  test("a recorded interaction is announced on the history channel (the embedded store has nobody to tell)", async () => {
    const seen: string[] = [];
    const unlisten = await ctx.deps.database.listen(HISTORY_CHANNEL, (payload) => seen.push(payload));
    try {
      await interact(ctx, tenant, "announcer", "p-1-1", "VIEW");
      // An earlier test's announcement (another user of this tenant) may still be on its way: look for ours.
      const ours = () =>
        seen
          .map((payload) => JSON.parse(payload) as { a: number; u?: string[] })
          .find((notice) => notice.u?.includes("announcer"));
      if (ctx.deps.database.kind === "pglite") {
        await Bun.sleep(200);
        expect(ours()).toBeUndefined();
        return;
      }
      for (let i = 0; i < 200 && ours() === undefined; i++) await Bun.sleep(25);
      expect(ours()?.a).toBe(tenant.accountId);
    } finally {
      await unlisten();
    }
  });

  test("another process's announcement drops the cached history, so its interaction changes the next answer", async () => {
    const user = "u-15";
    const body = { external_user_id: user, limit: 40 };
    const first = await ctx.request("POST", QUERY, { apiKey: tenant.apiKey, body });
    expect(first.status).toBe(200);
    const target = ids(first.body)[0]!;
    // Written as another process would: the row only, no in-process event.
    await ctx.deps.database.rows(sql`
      insert into interactions (account_id, end_user_id, product_id, interaction_type, value, occurred_at)
      select ${tenant.accountId}, eu.id, p.id, 'PURCHASE', 1, now()
      from end_users eu, products p
      where eu.account_id = ${tenant.accountId} and eu.external_id = ${user}
        and p.account_id = ${tenant.accountId} and p.external_id = ${target}`);
    const cached = await ctx.request("POST", QUERY, { apiKey: tenant.apiKey, body });
    expect(ids(cached.body)).toContain(target);
    await ctx.deps.database.notify(
      HISTORY_CHANNEL,
      JSON.stringify({ o: "another-process", a: tenant.accountId, u: [user] }),
    );
    let next = await ctx.request("POST", QUERY, { apiKey: tenant.apiKey, body });
    for (let i = 0; i < 200 && ids(next.body).includes(target); i++) {
      await Bun.sleep(25);
      next = await ctx.request("POST", QUERY, { apiKey: tenant.apiKey, body });
    }
    expect(ids(next.body)).not.toContain(target);
  });
});

describe("candidates carried from the user's previous history", () => {
  // A factor model: its collaborative query is kept per user (an EASE query is recomputed and never carried).
  let als: Tenant;
  beforeAll(async () => {
    als = await registerTenant(ctx);
    // Histories long enough to carry candidates (MIN_CARRIED_HISTORY), in a catalogue wider than a search.
    await generateTenant(ctx, als.accountId, {
      users: 60,
      interactionsPerUser: 100,
      productsPerCategory: 40,
    });
    const job = await trainAndWait(ctx, als.apiKey, { ...FAST_TRAINING, algorithm: "als" });
    expect(job.status).toBe("completed");
  }, 180_000);

  type Signal = "collaborative" | "content";
  /** The suite's signals, with one signal's searches counted (and the k each asked for). */
  function countingSignals(signals: ModelSignals, signal: Signal = "collaborative") {
    const searches: number[] = [];
    const found: Int32Array[] = [];
    const counting = Object.create(signals) as ModelSignals;
    counting[signal] = (dense) => {
      const query = signals[signal](dense);
      if (query === null) return null;
      return {
        score: query.score,
        ...(query.scoreInto ? { scoreInto: query.scoreInto } : {}),
        top: (k: number) => {
          searches.push(k);
          const items = query.top(k);
          found.push(items);
          return items;
        },
      };
    };
    return { counting, searches, found };
  }

  const viewed = (product: string, at: number) => ({
    externalProductId: product,
    interactionType: "VIEW",
    value: 1,
    occurredAt: new Date(at),
  });

  test.each([
    ["collaborative", "u-4"],
    ["content", "u-7"],
  ] as const)(
    "after a recorded interaction the next ranking rescores the previous %s search's items; the third in a row searches again",
    async (signal, user) => {
      const service = ctx.deps.recommendations;
      const view = await service.view(als.accountId);
      const { counting, searches, found } = countingSignals(view.signals!, signal);
      let history = await service.histories.get(als.accountId, user);
      expect(view.signals![signal](denseHistory(view.table, history))?.volatile).toBeFalsy();
      expect(denseHistory(view.table, history).items.length).toBeGreaterThanOrEqual(MIN_CARRIED_HISTORY);
      const first = userSignals(history, view.table, counting)[signal]()!;
      const firstTop = Array.from(first.top(20));
      // The search fetched a little more than asked, for the next history to carry.
      expect(searches).toEqual([20 + CARRY_SLACK]);
      expect(firstTop.length).toBe(20);
      const searched = [...found[0]!];
      const start = Date.now();
      for (let generation = 1; generation <= MAX_CARRIED_GENERATIONS; generation++) {
        const next = withInteractions(history, [viewed(`p-${generation}-1`, start + generation)]);
        carryCandidates(history, next);
        history = next;
        const query = userSignals(history, view.table, counting)[signal]()!;
        const top = query.top(20);
        expect(searches.length).toBe(1);
        // The best 20 of the searched items by the new history's own scores, best first.
        const best = [...searched].sort((a, b) => query.score(b) - query.score(a)).slice(0, 20);
        expect(top.length).toBe(20);
        for (let p = 0; p < top.length; p++) {
          expect(searched).toContain(top[p]!);
          expect(query.score(top[p]!)).toBeCloseTo(query.score(best[p]!), 5);
        }
      }
      const again = withInteractions(history, [viewed("p-3-3", start + 10)]);
      carryCandidates(history, again);
      userSignals(again, view.table, counting)[signal]()!.top(20);
      expect(searches.length).toBe(2);
    },
  );

  test("a short history searches: a few more products move its vector too far", async () => {
    const service = ctx.deps.recommendations;
    const view = await service.view(als.accountId);
    const { counting, searches } = countingSignals(view.signals!);
    const full = await service.histories.get(als.accountId, "u-5");
    const short = { ...full, events: full.events.slice(0, 5), interacted: [] };
    expect(denseHistory(view.table, short).items.length).toBeLessThan(MIN_CARRIED_HISTORY);
    userSignals(short, view.table, counting).collaborative()!.top(10);
    const next = withInteractions(short, [viewed("p-1-9", Date.now())]);
    carryCandidates(short, next);
    userSignals(next, view.table, counting).collaborative()!.top(10);
    expect(searches.length).toBe(2);
  });

  test("a wider request than the carried items, or another model, searches", async () => {
    const service = ctx.deps.recommendations;
    const view = await service.view(als.accountId);
    const { counting, searches } = countingSignals(view.signals!);
    const history = await service.histories.get(als.accountId, "u-6");
    userSignals(history, view.table, counting).collaborative()!.top(10);
    const next = withInteractions(history, [viewed("p-2-2", Date.now())]);
    carryCandidates(history, next);
    userSignals(next, view.table, counting)
      .collaborative()!
      .top(10 + CARRY_SLACK + 1);
    expect(searches.length).toBe(2);
    const other = countingSignals(view.signals!);
    const later = withInteractions(next, [viewed("p-2-3", Date.now() + 1)]);
    carryCandidates(next, later);
    userSignals(later, view.table, other.counting).collaborative()!.top(10);
    expect(other.searches.length).toBe(1);
  });

  test.each([
    ["collab", "u-8", factorIndex],
    ["content_based", "u-9", contentIndex],
  ] as const)(
    "through the routes (%s): a viewed product leaves the next answer without a search, as a fresh search would answer",
    async (strategy, user, indexOf) => {
      const body = { external_user_id: user, limit: 10, strategy };
      // The searches of the signal's index, on the request thread or off it, counted on the index itself.
      const view = await ctx.deps.recommendations.view(als.accountId);
      const index = indexOf(view.snapshot!.model)!.index;
      let searches = 0;
      const restore = watchSearches(index, () => {
        searches++;
        return "search";
      });
      try {
        Object.assign(tuning, { candidateMinItems: 0, selectiveMaxItems: 0 });
        const first = await ctx.request("POST", QUERY, { apiKey: als.apiKey, body });
        expect(searches).toBeGreaterThan(0);
        const target = ids(first.body)[0]!;
        await interact(ctx, als, user, target, "VIEW");
        searches = 0;
        const carried = await ctx.request("POST", QUERY, { apiKey: als.apiKey, body });
        expect(searches).toBe(0);
        expect(ids(carried.body)).not.toContain(target);
        // The same history read again from the store is a new object with nothing carried: it searches.
        ctx.deps.recommendations.histories.invalidate(als.accountId, user);
        const searched = await ctx.request("POST", QUERY, { apiKey: als.apiKey, body });
        expect(searches).toBeGreaterThan(0);
        expect(ids(carried.body)).toEqual(ids(searched.body));
        expect(carried.body.total).toBe(searched.body.total);
      } finally {
        restore();
        Object.assign(tuning, DEFAULT_TUNING);
      }
    },
  );
  describe("searches made ahead of the ranking, off the request thread", () => {
    const HOMEPAGE = "/api/v1/recommendations/ecommerce/homepage";
    const requests: [string, Record<string, unknown>][] = [
      [QUERY, { external_user_id: "u-20", limit: 10 }],
      [QUERY, { external_user_id: "u-21", limit: 5, skip: 4, recommendation_goal: "discovery" }],
      [QUERY, { external_user_id: "u-22", limit: 10, strategy: "collab" }],
      [QUERY, { external_user_id: "u-23", limit: 10, strategy: "content_based" }],
      [QUERY, { external_user_id: "u-24", limit: 8, model_variant: "diverse", include_explanation: true }],
      [QUERY, { external_user_id: "u-25", limit: 10, context: { source_external_product_id: "p-1-2" } }],
      // A filter keeping part of the catalogue: the searches reach further to make up for it.
      [
        QUERY,
        {
          external_user_id: "u-28",
          limit: 10,
          filters: { logic: "and", filters: [{ field: "brand", op: "in", value: ["brand0", "brand1"] }] },
        },
      ],
      [HOMEPAGE, { external_user_id: "u-26" }],
    ];

    /**
     * Both indexes' searches counted, on the request thread and off it (`folded`: those of them that also
     * solved the user's vector there); `failAhead`: the latter fail.
     */
    async function counted<T>(failAhead: boolean, run: () => Promise<T>) {
      const view = await ctx.deps.recommendations.view(als.accountId);
      const indexes = [factorIndex(view.snapshot!.model)!.index, contentIndex(view.snapshot!.model)!.index];
      const counts = { onThread: 0, ahead: 0 };
      let folded = 0;
      const restores = indexes.map((index) =>
        watchSearches(index, (kind) => {
          if (kind === "onThread") counts.onThread++;
          else counts.ahead++;
          if (kind === "folded") folded++;
          return kind !== "onThread" && failAhead ? "fail" : "search";
        }),
      );
      try {
        return { result: await run(), counts, folded };
      } finally {
        for (const restore of restores) restore();
      }
    }

    test.each(requests)(
      "%s %j: the first searches run ahead, none on the request thread, and a failed one is made there instead, with the same answer",
      async (path, body) => {
        const user = body.external_user_id as string;
        const ask = async () => {
          // A history read again: nothing memoised, nothing carried, so the ranking has to search.
          ctx.deps.recommendations.histories.invalidate(als.accountId, user);
          const response = await ctx.request("POST", path, { apiKey: als.apiKey, body });
          expect(response.status).toBe(200);
          return response.body as { items: { externalId: string }[]; total: number };
        };
        try {
          // Every catalogue ranked through candidates, and no listing scored whole: the paths that search.
          Object.assign(tuning, { candidateMinItems: 0, selectiveMaxItems: 0 });
          // A source product's similar items are searched on the request thread, once per model, and kept.
          await ask();
          const ahead = await counted(false, ask);
          expect(ahead.counts.ahead).toBeGreaterThan(0);
          expect(ahead.counts.onThread).toBe(0);
          // The collaborative search solves the user's vector on the pool's thread too (none for content).
          expect(ahead.folded).toBe(body.strategy === "content_based" ? 0 : 1);
          const failed = await counted(true, ask);
          expect(failed.counts.ahead).toBeGreaterThan(0);
          expect(failed.counts.onThread).toBe(failed.counts.ahead);
          expect(ids(ahead.result).length).toBeGreaterThan(0);
          expect(ids(ahead.result)).toEqual(ids(failed.result));
          expect(ahead.result.total).toBe(failed.result.total);
        } finally {
          Object.assign(tuning, DEFAULT_TUNING);
        }
      },
    );

    test.each([
      [
        "POST",
        "/api/v1/recommendations/ecommerce/product-page?current_product_id=p-3-30",
        { external_user_id: "u-29" },
      ],
      ["GET", "/api/v1/recommendations/products/external/p-2-31/similar?limit=10", undefined],
    ] as const)("%s %s: a product's similar items are searched ahead too", async (method, path, body) => {
      try {
        Object.assign(tuning, { candidateMinItems: 0, selectiveMaxItems: 0 });
        const { result, counts } = await counted(false, () =>
          ctx.request(method, path, { apiKey: als.apiKey, ...(body ? { body } : {}) }),
        );
        expect(result.status).toBe(200);
        expect(ids(result.body).length).toBeGreaterThan(0);
        // Taste and content for the product (and the user's own two on the product page).
        expect(counts.ahead).toBeGreaterThanOrEqual(2);
        expect(counts.onThread).toBe(0);
      } finally {
        Object.assign(tuning, DEFAULT_TUNING);
      }
    });

    test("a product's similar items made ahead are the ones made on the request thread", async () => {
      const view = await ctx.deps.recommendations.view(als.accountId);
      // Lists of the model's own, kept apart from the service's: each answers the product for the first time.
      const fresh = () => new SimilarLists(view.snapshot!.model, { ...DEFAULT_TUNING, candidateMinItems: 0 });
      for (const product of ["p-0-5", "p-1-17", "p-3-2"]) {
        const item = view.table.indexOf.get(product)!;
        const ahead = fresh();
        const made = await counted(false, async () => {
          await ahead.ahead(item, 200);
          expect(ahead.ahead(item, 200)).toBeNull();
          return ahead.get(item, 200);
        });
        expect(made.counts).toEqual({ onThread: 0, ahead: 2 });
        const onThread = await counted(false, async () => fresh().get(item, 200));
        expect(onThread.counts).toEqual({ onThread: 2, ahead: 0 });
        expect(made.result.items.length).toBe(Math.min(200, view.table.size - 1));
        expect(made.result).toEqual(onThread.result);
      }
    });

    test("a ranking that finds its searches already done, or needs none, waits for nothing", async () => {
      const service = ctx.deps.recommendations;
      const view = await service.view(als.accountId);
      const history = await service.histories.get(als.accountId, "u-27");
      const plan = personalPlan({
        table: view.table,
        signals: view.signals,
        history,
        weights: { collab: 1, content: 0.3, trend: 0.1 },
        limit: 10,
        tuning: { candidateMinItems: 0, selectiveMaxItems: 0 },
      });
      const first = searchesAhead(plan);
      expect(first).toBeInstanceOf(Promise);
      await first;
      expect(searchesAhead(plan)).toBeNull();
      const { counts } = await counted(false, async () => rank(plan));
      expect(counts).toEqual({ onThread: 0, ahead: 0 });
      // A small catalogue scores every item: nothing to search.
      expect(searchesAhead({ ...plan, tuning: DEFAULT_TUNING })).toBeNull();
      // A user without history has no personal signal to search with.
      const cold = await service.histories.get(als.accountId, "never-seen");
      expect(searchesAhead({ ...plan, history: cold })).toBeNull();
    });
  });
});

/**
 * Calls `watch` with each search of the index, on the request thread (`onThread`), off it (`ahead`) or off it
 * with the user's vector solved there too (`folded`), and fails those off it it answers "fail" for. Returns
 * what puts the index's own methods back.
 */
function watchSearches(
  index: HierarchicalNSW,
  watch: (kind: "onThread" | "ahead" | "folded") => "search" | "fail",
): () => void {
  const search = index.searchKnn.bind(index);
  const searchAsync = index.searchKnnAsync.bind(index);
  const searchFolded = index.searchFoldedAsync.bind(index);
  const failed = () => Promise.reject(new Error("search failed"));
  const methods = {
    searchKnn: (...args: Parameters<typeof search>) => {
      watch("onThread");
      return search(...args);
    },
    searchKnnAsync: (...args: Parameters<typeof searchAsync>) =>
      watch("ahead") === "fail" ? failed() : searchAsync(...args),
    searchFoldedAsync: (...args: Parameters<typeof searchFolded>) =>
      watch("folded") === "fail" ? failed() : searchFolded(...args),
  };
  for (const [name, value] of Object.entries(methods)) {
    Object.defineProperty(index, name, { configurable: true, value });
  }
  return () => {
    for (const name of Object.keys(methods)) delete (index as unknown as Record<string, unknown>)[name];
  };
}
