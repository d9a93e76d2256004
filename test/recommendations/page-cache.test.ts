import { describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { DEFAULT_TUNING } from "../../src/engine/ranking/candidates";
import type { UserHistory } from "../../src/modules/recommendations/serving/history-cache";
import type { ItemTable } from "../../src/modules/recommendations/serving/item-table";
import {
  cachedPage,
  cachedPlannedPage,
  PageCache,
  type PageInputs,
  type RenderedPage,
} from "../../src/modules/recommendations/serving/page-cache";
import type { ServingView } from "../../src/modules/recommendations/serving/view";
import { sharedTestContext } from "../helpers/context";
import { catalogue, createShop, ids, interact } from "./fixtures";

const QUERY = "/api/v1/recommendations/personalized/query";

function history(): UserHistory {
  return {
    endUserId: 1,
    preferredCategories: [],
    priceRangeMin: null,
    priceRangeMax: null,
    events: [],
    interacted: [],
  };
}

function view(revision = { value: 0 }): ServingView {
  const table = { size: 0, revision: () => revision.value } as unknown as ItemTable;
  return { table, signals: null };
}

function page(label: string, items = 1): RenderedPage {
  const list = Array.from({ length: items }, (_, i) => ({
    externalId: `${label}-${i}`,
    name: label,
    score: 1,
    source: "popular" as const,
  }));
  return {
    endpoint: "personalized/query",
    endUserId: 1,
    itemIds: list.map((i) => i.externalId),
    body: { items: list, total: items, skip: 0, limit: items },
    bytes: 100 * items,
  };
}

describe("PageCache", () => {
  const key = PageCache.key(1, "u1", "personalized/query", '{"limit":20}');

  test("serves an answer again only while every input is the same", () => {
    const cache = new PageCache();
    const revision = { value: 0 };
    const inputs: PageInputs = { history: history(), view: view(revision), tuning: { ...DEFAULT_TUNING } };
    cache.set(key, inputs, page("a"));
    expect(cache.get(key, inputs)?.body.items[0]?.externalId).toBe("a-0");

    // A new history object: the user interacted (or the entry was reloaded).
    expect(cache.get(key, { ...inputs, history: history() })).toBeUndefined();
    cache.set(key, inputs, page("a"));
    // A newly published model: another view.
    expect(cache.get(key, { ...inputs, view: view(revision) })).toBeUndefined();
    cache.set(key, inputs, page("a"));
    // Other candidate thresholds.
    expect(
      cache.get(key, { ...inputs, tuning: { ...DEFAULT_TUNING, candidateMinItems: 0 } }),
    ).toBeUndefined();
    cache.set(key, inputs, page("a"));
    // A catalogue change written into the snapshot in place.
    revision.value++;
    expect(cache.get(key, inputs)).toBeUndefined();
    expect(cache.size).toBe(0);
  });

  test("another request, user or account is another entry", () => {
    const cache = new PageCache();
    const inputs: PageInputs = { history: history(), view: view(), tuning: DEFAULT_TUNING };
    cache.set(key, inputs, page("a"));
    expect(cache.get(PageCache.key(1, "u1", "personalized/query", '{"limit":10}'), inputs)).toBeUndefined();
    expect(cache.get(PageCache.key(1, "u2", "personalized/query", '{"limit":20}'), inputs)).toBeUndefined();
    expect(cache.get(PageCache.key(2, "u1", "personalized/query", '{"limit":20}'), inputs)).toBeUndefined();
    expect(cache.get(PageCache.key(1, "u1", "ecommerce/homepage", '{"limit":20}'), inputs)).toBeUndefined();
  });

  test("keeps within its byte budget, dropping the least recently used", () => {
    const cache = new PageCache(16 * 1024);
    const inputs: PageInputs = { history: history(), view: view(), tuning: DEFAULT_TUNING };
    const keys = Array.from({ length: 40 }, (_, i) => PageCache.key(1, `u${i}`, "q", "{}"));
    cache.set(keys[0]!, inputs, page("first", 5));
    for (let i = 1; i < keys.length; i++) {
      cache.get(keys[0]!, inputs); // keeps the first one recently used
      cache.set(keys[i]!, inputs, page(`p${i}`, 5));
    }
    expect(cache.size).toBeLessThan(keys.length);
    expect(cache.size).toBeGreaterThan(5);
    expect(cache.get(keys[0]!, inputs)).toBeDefined();
    expect(cache.get(keys[1]!, inputs)).toBeUndefined();
    expect(cache.get(keys[39]!, inputs)).toBeDefined();
    // An answer too large for a sixteenth of the budget is not kept at all.
    cache.set(keys[1]!, inputs, page("huge", 100));
    expect(cache.get(keys[1]!, inputs)).toBeUndefined();
  });

  test("forgets an erased end user and a deleted account", () => {
    const cache = new PageCache();
    const inputs: PageInputs = { history: history(), view: view(), tuning: DEFAULT_TUNING };
    const mine = PageCache.key(1, "gone", "q", "{}");
    const other = PageCache.key(1, "gone2", "q", "{}");
    const elsewhere = PageCache.key(2, "x", "q", "{}");
    for (const k of [mine, other, elsewhere]) cache.set(k, inputs, page(k));
    cache.dropEndUser(1, "gone");
    expect(cache.get(mine, inputs)).toBeUndefined();
    expect(cache.get(other, inputs)).toBeDefined();
    cache.dropAccount(1);
    expect(cache.get(other, inputs)).toBeUndefined();
    expect(cache.get(elsewhere, inputs)).toBeDefined();
  });

  test("while the cache is under half its budget, an answer is kept on its first computation", () => {
    const cache = new PageCache();
    const inputs: PageInputs = { history: history(), view: view(), tuning: DEFAULT_TUNING };
    expect(cache.offer(key, inputs, page("a"))).toBe(true);
    expect(cache.get(key, inputs)?.body.items[0]?.externalId).toBe("a-0");
  });

  test("past half its budget, an answer is admitted on its second computation, not its first", () => {
    const cache = halfFull();
    const inputs: PageInputs = { history: history(), view: view(), tuning: DEFAULT_TUNING };
    const size = cache.size;
    expect(cache.offer(key, inputs, page("a"))).toBe(false);
    expect(cache.get(key, inputs)).toBeUndefined();
    // Another key asked for once does not make this one admissible, nor the other way round.
    expect(cache.offer(PageCache.key(1, "u2", "q", "{}"), inputs, page("b"))).toBe(false);
    expect(cache.offer(key, inputs, page("a"))).toBe(true);
    expect(cache.get(key, inputs)?.body.items[0]?.externalId).toBe("a-0");
    expect(cache.size).toBe(size + 1);
  });

  test("past half its budget, an answer kept before is admitted again on its first recomputation", () => {
    const cache = halfFull();
    const inputs: PageInputs = { history: history(), view: view(), tuning: DEFAULT_TUNING };
    cache.offer(key, inputs, page("a"));
    expect(cache.offer(key, inputs, page("a"))).toBe(true);
    // The end user's history changes: the kept answer is stale, and its recomputation is kept at once.
    const next: PageInputs = { ...inputs, history: history() };
    expect(cache.get(key, next)).toBeUndefined();
    expect(cache.offer(key, next, page("b"))).toBe(true);
    expect(cache.get(key, next)?.body.items[0]?.externalId).toBe("b-0");
    // A key that was never kept is still admitted on its second computation only.
    const other = PageCache.key(1, "u3", "q", "{}");
    expect(cache.get(other, next)).toBeUndefined();
    expect(cache.offer(other, next, page("c"))).toBe(false);
  });

  test("keys asked for once are forgotten generation by generation", () => {
    const cache = halfFull();
    const inputs: PageInputs = { history: history(), view: view(), tuning: DEFAULT_TUNING };
    cache.offer(key, inputs, page("a"));
    // Two full generations of other one-off keys later, the first key counts as new again.
    for (let i = 0; i < 100_001; i++) cache.offer(PageCache.key(1, `once${i}`, "q", "{}"), inputs, page("x"));
    expect(cache.offer(key, inputs, page("a"))).toBe(false);
  });

  test("cachedPage computes an unchanged answer once while there is room, at most twice after, once per change", () => {
    for (const [cache, times] of [
      [new PageCache(), 1],
      [halfFull(), 2],
    ] as const) {
      const inputs: PageInputs = { history: history(), view: view(), tuning: DEFAULT_TUNING };
      let computed = 0;
      const compute = () => {
        computed++;
        return page("a");
      };
      for (let n = 0; n < 4; n++) cachedPage(cache, key, inputs, compute);
      expect(computed).toBe(times);
      // A new history is another input: computed afresh, and (the answer having been kept before) kept.
      const next = { ...inputs, history: history() };
      for (let n = 0; n < 4; n++) cachedPage(cache, key, next, compute);
      expect(computed).toBe(times + 1);
    }
  });

  test("cachedPlannedPage waits for the plan's work, plans again after it, and keeps the answer", async () => {
    const cache = new PageCache();
    const inputs: PageInputs = { history: history(), view: view(), tuning: DEFAULT_TUNING };
    let plans = 0;
    const { work, release } = gate();
    const pending = cachedPlannedPage(
      cache,
      key,
      inputs,
      () => ++plans,
      () => work,
      (planned) => page(`plan${planned}`),
    );
    expect(pending).toBeInstanceOf(Promise);
    expect(cache.size).toBe(0);
    release();
    expect((await pending).body.items[0]?.externalId).toBe("plan2-0");
    expect(cache.get(key, inputs)?.body.items[0]?.externalId).toBe("plan2-0");
    // Nothing to wait for: answered at once, from the first plan; not cacheable: not kept.
    const other = PageCache.key(1, "u2", "personalized/query", "{}");
    const now = cachedPlannedPage(
      cache,
      other,
      inputs,
      () => ++plans,
      () => null,
      (planned) => page(`plan${planned}`),
      () => false,
    );
    expect((now as RenderedPage).body.items[0]?.externalId).toBe("plan3-0");
    expect(cache.get(other, inputs)).toBeUndefined();
  });

  test("an answer whose wait saw an erasure or an account deleted is answered but not kept", async () => {
    for (const drop of [
      (cache: PageCache) => cache.dropEndUser(1, "u1"),
      (cache: PageCache) => cache.dropAccount(1),
      (cache: PageCache) => cache.dropEndUser(2, "someone else"),
    ]) {
      const cache = new PageCache();
      const inputs: PageInputs = { history: history(), view: view(), tuning: DEFAULT_TUNING };
      const { work, release } = gate();
      const pending = cachedPlannedPage(
        cache,
        key,
        inputs,
        () => 1,
        () => work,
        () => page("a"),
      );
      drop(cache);
      release();
      expect((await pending).body.items[0]?.externalId).toBe("a-0");
      expect(cache.size).toBe(0);
      expect(cache.get(key, inputs)).toBeUndefined();
    }
  });
});

/** Work that is done when the test says so. */
function gate(): { work: Promise<void>; release: () => void } {
  let release = () => {};
  const work = new Promise<void>((resolve) => {
    release = resolve;
  });
  return { work, release };
}

/** A 16 KB cache filled past half its budget (each entry is about 780 bytes). */
function halfFull(): PageCache {
  const cache = new PageCache(16 * 1024);
  const inputs: PageInputs = { history: history(), view: view(), tuning: DEFAULT_TUNING };
  for (let i = 0; i < 12; i++) cache.set(PageCache.key(9, `filler${i}`, "q", "{}"), inputs, page(`f${i}`, 5));
  return cache;
}

describe("page cache behind the routes", () => {
  test("a repeated query is answered identically, and logged and counted every time", async () => {
    const ctx = await sharedTestContext();
    const { tenant } = await createShop(ctx, catalogue(12));
    await interact(ctx, tenant, "again", "p1", "VIEW");
    const body = { external_user_id: "again", limit: 5 };
    const first = await ctx.request("POST", QUERY, { apiKey: tenant.apiKey, body });
    const second = await ctx.request("POST", QUERY, { apiKey: tenant.apiKey, body });
    expect(first.status).toBe(200);
    // The same answer under an id of its own (each sending is an answer of its own for attribution).
    const { recommendationId: firstId, ...firstPage } = first.body;
    const { recommendationId: secondId, ...secondPage } = second.body;
    expect(secondPage).toEqual(firstPage);
    expect(secondId).not.toBe(firstId);
    // The second answer is the first one's JSON text (with its id), sent with the same headers as any JSON response.
    for (const res of [first, second]) {
      expect(res.headers.get("content-type")).toBe("application/json;charset=utf-8");
      expect(res.headers.get("x-request-id")).toBeTruthy();
      expect(res.headers.get("x-ratelimit-limit")).toBeTruthy();
    }
    expect(second.headers.get("x-request-id")).not.toBe(first.headers.get("x-request-id"));
    await ctx.deps.recommendations.logs.flush();
    const logs = await ctx.deps.database.rows<{ n: number | string }>(
      sql`select count(*) as n from recommendation_logs where account_id = ${tenant.accountId}`,
    );
    expect(Number(logs[0]!.n)).toBe(2);
  });

  test("a catalogue change or a new interaction is in the very next answer", async () => {
    const ctx = await sharedTestContext();
    const { tenant } = await createShop(ctx, catalogue(12));
    const body = { external_user_id: "fresh", strategy: "popularity", limit: 12 };
    const ask = () => ctx.request("POST", QUERY, { apiKey: tenant.apiKey, body });
    const before = await ask();
    expect(ids(before.body)).toContain("p3");
    const { externalId: _, ...p3 } = catalogue(12)[2]!;
    const replaced = await ctx.request("PUT", "/api/v1/products/external/p3", {
      apiKey: tenant.apiKey,
      body: { ...p3, name: "Renamed product 3" },
    });
    expect(replaced.status).toBe(200);
    const renamed = await ask();
    expect(renamed.body.items.find((i: { externalId: string }) => i.externalId === "p3")?.name).toBe(
      "Renamed product 3",
    );
    await interact(ctx, tenant, "fresh", "p3", "PURCHASE");
    const after = await ask();
    expect(ids(after.body)).not.toContain("p3");
  });

  test("an erased end user's answers leave the cache", async () => {
    const ctx = await sharedTestContext();
    const { tenant } = await createShop(ctx, catalogue(6));
    await interact(ctx, tenant, "erase-me", "p1", "VIEW");
    const body = { external_user_id: "erase-me", limit: 5 };
    // Asked for twice: cached whichever computation admits it.
    for (let n = 0; n < 2; n++) await ctx.request("POST", QUERY, { apiKey: tenant.apiKey, body });
    const pages = ctx.deps.recommendations.pages;
    const before = pages.size;
    const erased = await ctx.request("DELETE", "/api/v1/end-users/external/erase-me", {
      apiKey: tenant.apiKey,
    });
    expect(erased.status).toBe(200);
    expect(pages.size).toBe(before - 1);
  });
});
