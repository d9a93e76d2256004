import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { sql } from "drizzle-orm";
import type { Database } from "../../src/db/client";
import { HistoryBatch } from "../../src/modules/recommendations/serving/history-batch";
import { HistoryCache } from "../../src/modules/recommendations/serving/history-cache";
import { RecommendationService } from "../../src/modules/recommendations/serving/service";
import { createTestContext, type TestContext } from "../helpers/context";
import { registerTenant, type Tenant } from "../helpers/tenant";
import { FAST_TRAINING, generateTenant, trainAndWait } from "../pipeline/fixtures";
import { ids, interact } from "./fixtures";

setDefaultTimeout(60_000);

const QUERY = "/api/v1/recommendations/personalized/query";
/** More distinct products than a history's latest-events window (200). */
const HEAVY_PRODUCTS = 250;

let ctx: TestContext;
let tenant: Tenant;
let products: string[];

beforeAll(async () => {
  ctx = await createTestContext();
  tenant = await registerTenant(ctx);
  ({ products } = await generateTenant(ctx, tenant.accountId, {
    users: 30,
    interactionsPerUser: 10,
    categories: 4,
    productsPerCategory: 80,
  }));
  // A heavy user: one interaction with each of the first HEAVY_PRODUCTS products, a minute apart.
  await ctx.deps.database.rows(sql`
    insert into end_users (account_id, external_id, preferred_categories, price_range_min)
    values (${tenant.accountId}, 'heavy', '["cat1"]'::jsonb, 12)`);
  await ctx.deps.database.rows(sql`
    insert into interactions (account_id, end_user_id, product_id, interaction_type, value, occurred_at)
    select ${tenant.accountId}, eu.id, p.id, case when p.n % 7 = 0 then 'RATING' else 'VIEW' end,
           case when p.n % 7 = 0 then 4.5 else 1 end, now() - make_interval(mins => p.n::int)
    from end_users eu,
         (select id, row_number() over (order by id) as n from products where account_id = ${tenant.accountId}
          order by id limit ${HEAVY_PRODUCTS}) p
    where eu.account_id = ${tenant.accountId} and eu.external_id = 'heavy'`);
  const job = await trainAndWait(ctx, tenant.apiKey, FAST_TRAINING);
  expect(job.status).toBe("completed");
  // The model in memory names the histories' products.
  expect(
    (await ctx.request("POST", QUERY, { apiKey: tenant.apiKey, body: { external_user_id: "u-0" } })).status,
  ).toBe(200);
}, 180_000);

afterAll(async () => {
  await ctx?.close();
});

/** The product names the service's own cache uses: the account's model in memory. */
function names(accountId: number) {
  const items = ctx.deps.snapshots.peekSnapshot(accountId)?.items;
  if (items === undefined) return undefined;
  return (productId: number) => {
    const index = items.indexByProductId.get(productId);
    return index === undefined ? undefined : items.externalIds[index];
  };
}

describe("histories read in bulk", () => {
  test("say exactly what a read of each user says, heavy users included", async () => {
    const bulk = new HistoryCache(ctx.deps.database, Date.now, names, { preload: true });
    const single = new HistoryCache(ctx.deps.database, Date.now, names);
    // The first ask starts the account's bulk read; until it is in, users are read one by one.
    bulk.loaded(tenant.accountId, "heavy");
    await bulk.preload!.settled(tenant.accountId);
    for (const user of ["heavy", "u-0", "u-1", "u-17", "u-29"]) {
      const fromBulk = bulk.loaded(tenant.accountId, user);
      expect(fromBulk).toBeDefined();
      const read = await single.get(tenant.accountId, user);
      expect(fromBulk).toEqual(read);
    }
    const heavy = bulk.loaded(tenant.accountId, "heavy")!;
    expect(heavy.events).toHaveLength(200);
    expect(heavy.interacted).toHaveLength(HEAVY_PRODUCTS);
    expect(heavy.preferredCategories).toEqual(["cat1"]);
    expect(heavy.priceRangeMin).toBe(12);
  });

  test("start when the account's model is in memory, before any user is asked for", async () => {
    const cache = new HistoryCache(ctx.deps.database, Date.now, names, { preload: true });
    cache.warm(tenant.accountId);
    await cache.preload!.settled(tenant.accountId);
    const single = new HistoryCache(ctx.deps.database, Date.now, names);
    expect(cache.loaded(tenant.accountId, "u-21")).toEqual(await single.get(tenant.accountId, "u-21"));
    // Without a model there is nothing to name products by, and nothing is read.
    const none = new HistoryCache(ctx.deps.database, Date.now, () => undefined, { preload: true });
    none.warm(tenant.accountId);
    await none.preload!.settled(tenant.accountId);
    expect(none.loaded(tenant.accountId, "u-21")).toBeUndefined();
  });

  test("the service starts it when it loads the account's model (embedded store)", async () => {
    const service = new RecommendationService(
      ctx.deps.database,
      ctx.deps.logger,
      ctx.deps.snapshots,
      ctx.deps.events,
    );
    await service.view(tenant.accountId);
    const preload = service.histories.preload;
    if (ctx.deps.database.kind !== "pglite") {
      // A shared database is written by other processes too: its users are read one by one.
      expect(preload).toBeUndefined();
      return;
    }
    await preload!.settled(tenant.accountId);
    expect(service.histories.loaded(tenant.accountId, "u-22")?.endUserId).toBeNumber();
  });

  test("a user with news since the bulk read is read from the database", async () => {
    const bulk = new HistoryCache(ctx.deps.database, Date.now, names, { preload: true });
    bulk.loaded(tenant.accountId, "u-3");
    await bulk.preload!.settled(tenant.accountId);
    // Written behind this cache's back, then announced as an update (as an erasure or profile change is).
    await ctx.deps.database.rows(sql`
      update end_users set price_range_max = 99 where account_id = ${tenant.accountId} and external_id = 'u-3'`);
    bulk.invalidate(tenant.accountId, "u-3");
    expect(bulk.loaded(tenant.accountId, "u-3")).toBeUndefined();
    expect((await bulk.get(tenant.accountId, "u-3")).priceRangeMax).toBe(99);
    // Users the account did not have when the bulk read was made are not in it.
    expect(bulk.loaded(tenant.accountId, "someone-new")).toBeUndefined();
  });

  test("a write changes that user's next answer, served from the page cache before it", async () => {
    const ask = async () => {
      const res = await ctx.request("POST", QUERY, {
        apiKey: tenant.apiKey,
        body: { external_user_id: "u-5", limit: 10 },
      });
      expect(res.status).toBe(200);
      return ids(res.body as { items: { externalId: string }[] });
    };
    await ctx.deps.recommendations.histories.preload?.settled(tenant.accountId);
    const first = await ask();
    // Asked again: computed a second time and kept, then answered from the cache.
    expect(await ask()).toEqual(first);
    expect(await ask()).toEqual(first);
    await interact(ctx, tenant, "u-5", first[0]!, "PURCHASE");
    const after = await ask();
    expect(after).not.toContain(first[0]);
    expect(after).not.toEqual(first);
  });

  test("a history longer than the fold-in window leaves all its products out of the answers", async () => {
    await ctx.deps.recommendations.histories.preload?.settled(tenant.accountId);
    const res = await ctx.request("POST", QUERY, {
      apiKey: tenant.apiKey,
      body: { external_user_id: "heavy", limit: 100 },
    });
    expect(res.status).toBe(200);
    const body = res.body as { items: { externalId: string }[]; total: number };
    const answered = ids(body);
    expect(answered.length).toBeGreaterThan(0);
    const heavyProducts = await ctx.deps.database.rows<{ external_id: string }>(sql`
      select distinct p.external_id from interactions i join products p on p.id = i.product_id
      join end_users eu on eu.id = i.end_user_id
      where eu.account_id = ${tenant.accountId} and eu.external_id = 'heavy'`);
    const theirs = new Set(heavyProducts.map((r) => r.external_id));
    expect(theirs.size).toBe(HEAVY_PRODUCTS);
    for (const id of answered) expect(theirs.has(id)).toBe(false);
    expect(body.total).toBe(products.length - HEAVY_PRODUCTS);
  });

  test("a user updated while the bulk read is under way is read from the database, not from it", async () => {
    const bulk = new HistoryCache(ctx.deps.database, Date.now, names, { preload: true });
    // Starts the read; no statement of it has finished yet.
    expect(bulk.loaded(tenant.accountId, "u-8")).toBeUndefined();
    await ctx.deps.database.rows(sql`
      update end_users set price_range_max = 77 where account_id = ${tenant.accountId} and external_id = 'u-8'`);
    bulk.invalidate(tenant.accountId, "u-8");
    await bulk.preload!.settled(tenant.accountId);
    expect(bulk.loaded(tenant.accountId, "u-9")).toBeDefined();
    expect(bulk.loaded(tenant.accountId, "u-8")).toBeUndefined();
    expect((await bulk.get(tenant.accountId, "u-8")).priceRangeMax).toBe(77);
  });
});

describe("reads of single users made together", () => {
  /** The store, counting the statements run through it. */
  function counted(): { database: Database; statements: () => number } {
    let n = 0;
    const database: Database = {
      ...ctx.deps.database,
      rows: (query, on) => {
        n++;
        return ctx.deps.database.rows(query, on);
      },
    };
    return { database, statements: () => n };
  }

  test("users asked for in one turn are read in one statement, each as a read of it alone says", async () => {
    const { database, statements } = counted();
    const batch = new HistoryBatch(database, 200);
    const nameOf = names(tenant.accountId)!;
    const users = ["heavy", "u-2", "u-11", "u-2", "u-23", "nobody"];
    const read = await Promise.all(users.map((user) => batch.read(tenant.accountId, user, nameOf)));
    expect(statements()).toBe(1);
    const single = new HistoryCache(ctx.deps.database, Date.now, names);
    for (const [i, user] of users.entries()) {
      if (user === "nobody") expect(read[i]).toBeNull();
      else expect(read[i] as unknown).toEqual(await single.get(tenant.accountId, user));
    }
    expect(read[0]!.events).toHaveLength(200);
    expect(read[0]!.interacted).toHaveLength(HEAVY_PRODUCTS);
  });

  test("users asked for while a read is under way go together in the statement after it", async () => {
    // The store holds each statement until the test lets it go.
    const started: (() => void)[] = [];
    let n = 0;
    const database: Database = {
      ...ctx.deps.database,
      rows: async (query, on) => {
        n++;
        await new Promise<void>((go) => started.push(go));
        return ctx.deps.database.rows(query, on);
      },
    };
    const batch = new HistoryBatch(database, 200);
    const nameOf = names(tenant.accountId)!;
    const first = batch.read(tenant.accountId, "u-3", nameOf);
    while (started.length === 0) await Bun.sleep(1);
    // Two more users, each in a turn of its own, while the first statement runs.
    const second = batch.read(tenant.accountId, "u-5", nameOf);
    await Bun.sleep(5);
    const third = batch.read(tenant.accountId, "u-7", nameOf);
    await Bun.sleep(5);
    expect(n).toBe(1);
    started.shift()!();
    expect(await first).toBeDefined();
    while (started.length === 0) await Bun.sleep(1);
    started.shift()!();
    const [u5, u7] = await Promise.all([second, third]);
    expect(n).toBe(2);
    const single = new HistoryCache(ctx.deps.database, Date.now, names);
    expect(u5 as unknown).toEqual(await single.get(tenant.accountId, "u-5"));
    expect(u7 as unknown).toEqual(await single.get(tenant.accountId, "u-7"));
  });

  test("a user with a product the model cannot name is left to the read that names it", async () => {
    const single = new HistoryCache(ctx.deps.database, Date.now, names);
    const history = await single.get(tenant.accountId, "u-4");
    const unknown = history.interacted[0]!;
    const nameOf = names(tenant.accountId)!;
    const partial = (productId: number) => {
      const name = nameOf(productId);
      return name === unknown ? undefined : name;
    };
    const batch = new HistoryBatch(ctx.deps.database, 200);
    expect(await batch.read(tenant.accountId, "u-4", partial)).toBeUndefined();
    // Through the cache: the user is read alone, products named by the database (which lists them by name).
    const cache = new HistoryCache(ctx.deps.database, Date.now, () => partial, { preload: true });
    const read = await cache.get(tenant.accountId, "u-4");
    expect(read.events).toEqual(history.events);
    expect([...read.interacted].sort()).toEqual([...history.interacted].sort());
    expect(read.interacted).toContain(unknown);
  });

  test("a write between a batched read and the next request changes that user's history", async () => {
    const cache = new HistoryCache(ctx.deps.database, Date.now, names, { preload: true });
    const before = await cache.get(tenant.accountId, "u-12");
    const product = products.find((p) => !before.interacted.includes(p))!;
    await interact(ctx, tenant, "u-12", product, "PURCHASE");
    // Behind this cache's back: only the announcement tells it.
    expect(cache.loaded(tenant.accountId, "u-12")).toBe(before);
    cache.invalidate(tenant.accountId, "u-12");
    const after = await cache.get(tenant.accountId, "u-12");
    expect(after.events[0]!.externalProductId).toBe(product);
    expect(after.interacted).toContain(product);
  });
});
