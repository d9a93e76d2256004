import { describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { EMBEDDED_STORE_TTL_MS, HistoryCache } from "../../src/modules/recommendations/serving/history-cache";
import { sharedTestContext } from "../helpers/context";
import { catalogue, createEndUser, createShop, interact } from "./fixtures";

const writeBehindTheCache = (accountId: number, externalUserId: string, externalProductId: string) => sql`
  insert into interactions (account_id, end_user_id, product_id, interaction_type, value, occurred_at)
  select ${accountId}, u.id, p.id, 'PURCHASE', 1, now()
  from end_users u, products p
  where u.account_id = ${accountId} and u.external_id = ${externalUserId}
    and p.account_id = ${accountId} and p.external_id = ${externalProductId}`;

describe("end-user history cache", () => {
  test("a history read again after its TTL keeps its object while unchanged, and is replaced once it changed", async () => {
    const ctx = await sharedTestContext();
    const { tenant } = await createShop(ctx, catalogue(4));
    await interact(ctx, tenant, "steady", "p1");
    let now = 1_000_000;
    const cache = new HistoryCache(ctx.deps.database, () => now);
    const first = await cache.get(tenant.accountId, "steady");
    expect(first.events.map((e) => e.externalProductId)).toEqual(["p1"]);
    expect(await cache.get(tenant.accountId, "steady")).toBe(first);

    now += 31_000;
    const reread = await cache.get(tenant.accountId, "steady");
    expect(reread).toBe(first);

    // Written behind this cache's back (as another process would), so only the TTL brings it in.
    await ctx.deps.database.rows(writeBehindTheCache(tenant.accountId, "steady", "p2"));
    expect(await cache.get(tenant.accountId, "steady")).toBe(first);
    now += 31_000;
    const changed = await cache.get(tenant.accountId, "steady");
    expect(changed).not.toBe(first);
    expect(changed.events.map((e) => e.externalProductId)).toEqual(["p2", "p1"]);
    expect([...changed.interacted].sort()).toEqual(["p1", "p2"]);
  });

  test("interactions recorded here are taken into the cached history as a read would return them", async () => {
    const ctx = await sharedTestContext();
    const { tenant } = await createShop(ctx, catalogue(5));
    await interact(ctx, tenant, "recorder", "p1");
    const histories = ctx.deps.recommendations.histories;
    const before = await histories.get(tenant.accountId, "recorder");
    const record = (body: Record<string, unknown>) =>
      ctx.request("POST", "/api/v1/interactions/", {
        apiKey: tenant.apiKey,
        body: { external_user_id: "recorder", ...body },
      });
    expect((await record({ external_product_id: "p2", interaction_type: "purchase" })).status).toBe(200);
    // An older interaction sent late lands by its time, after the newer ones.
    const yesterday = new Date(Date.now() - 86_400_000).toISOString();
    const late = await record({
      external_product_id: "p3",
      interaction_type: "RATING",
      value: 4,
      timestamp: yesterday,
    });
    expect(late.status).toBe(200);
    const updated = histories.loaded(tenant.accountId, "recorder");
    expect(updated).toBeDefined();
    expect(updated).not.toBe(before);
    // The same as reading it from the database.
    histories.invalidate(tenant.accountId, "recorder");
    const read = await histories.get(tenant.accountId, "recorder");
    expect(updated!.events).toEqual(read.events);
    expect([...updated!.interacted].sort()).toEqual([...read.interacted].sort());
    expect(read.events.map((e) => e.externalProductId)).toEqual(["p2", "p1", "p3"]);
  });

  test("an interaction that creates the end user drops the cached empty history", async () => {
    const ctx = await sharedTestContext();
    const { tenant } = await createShop(ctx, catalogue(2));
    const histories = ctx.deps.recommendations.histories;
    expect((await histories.get(tenant.accountId, "newcomer")).endUserId).toBeNull();
    await interact(ctx, tenant, "newcomer", "p1");
    expect(histories.loaded(tenant.accountId, "newcomer")).toBeUndefined();
    const read = await histories.get(tenant.accountId, "newcomer");
    expect(read.endUserId).not.toBeNull();
    expect(read.events.map((e) => e.externalProductId)).toEqual(["p1"]);
  });

  test("another account's end user of the same external id is a different, empty history", async () => {
    const ctx = await sharedTestContext();
    const a = await createShop(ctx, catalogue(2));
    const b = await createShop(ctx, catalogue(2));
    await interact(ctx, a.tenant, "shared-name", "p1");
    const cache = new HistoryCache(ctx.deps.database);
    expect((await cache.get(a.tenant.accountId, "shared-name")).events).toHaveLength(1);
    const other = await cache.get(b.tenant.accountId, "shared-name");
    expect(other.endUserId).toBeNull();
    expect(other.events).toEqual([]);
  });

  test("with the embedded store's TTL a history is read again after ten minutes, not thirty seconds", async () => {
    const ctx = await sharedTestContext();
    const { tenant } = await createShop(ctx, catalogue(4));
    await interact(ctx, tenant, "owned", "p1");
    let now = 1_000_000;
    const cache = new HistoryCache(
      ctx.deps.database,
      () => now,
      () => undefined,
      {
        ttlMs: EMBEDDED_STORE_TTL_MS,
      },
    );
    const first = await cache.get(tenant.accountId, "owned");
    await ctx.deps.database.rows(writeBehindTheCache(tenant.accountId, "owned", "p2"));
    now += 31_000;
    expect(await cache.get(tenant.accountId, "owned")).toBe(first);
    now += EMBEDDED_STORE_TTL_MS;
    const changed = await cache.get(tenant.accountId, "owned");
    expect(changed.events.map((e) => e.externalProductId)).toEqual(["p2", "p1"]);
  });

  test("creating an end user, or changing their profile by bulk ingestion, drops their cached history", async () => {
    const ctx = await sharedTestContext();
    const { tenant } = await createShop(ctx, catalogue(4));
    const histories = ctx.deps.recommendations.histories;
    expect((await histories.get(tenant.accountId, "latecomer")).endUserId).toBeNull();
    await createEndUser(ctx, tenant, { externalId: "latecomer", preferredCategories: ["books"] });
    expect(histories.loaded(tenant.accountId, "latecomer")).toBeUndefined();
    const created = await histories.get(tenant.accountId, "latecomer");
    expect(created.endUserId).not.toBeNull();
    expect(created.preferredCategories).toEqual(["books"]);

    const accepted = await ctx.request("POST", "/api/v1/ingestion/batch", {
      apiKey: tenant.apiKey,
      body: { users: [{ externalId: "latecomer", preferredCategories: ["garden"], priceRangeMax: 50 }] },
    });
    expect(accepted.status).toBe(202);
    const deadline = Date.now() + 30_000;
    let job = accepted;
    while (Date.now() < deadline) {
      job = await ctx.request("GET", `/api/v1/ingestion/batch/${accepted.body.jobId}`, {
        apiKey: tenant.apiKey,
      });
      if (job.body.status !== "processing") break;
      await Bun.sleep(50);
    }
    expect(job.body.status).toBe("completed");
    expect(histories.loaded(tenant.accountId, "latecomer")).toBeUndefined();
    const ingested = await histories.get(tenant.accountId, "latecomer");
    expect(ingested.preferredCategories).toEqual(["garden"]);
    expect(ingested.priceRangeMax).toBe(50);
  });

  test("a history that took in interactions recorded here is kept when a read after its TTL says the same", async () => {
    const ctx = await sharedTestContext();
    const { tenant } = await createShop(ctx, catalogue(4));
    await interact(ctx, tenant, "mover", "p3");
    let now = 1_000_000;
    const cache = new HistoryCache(ctx.deps.database, () => now);
    const first = await cache.get(tenant.accountId, "mover");
    // p1 has a lower id than p3: a read lists it first, the recorded history last.
    const at = new Date(Date.now() + 1_000);
    await ctx.deps.database.rows(sql`
      insert into interactions (account_id, end_user_id, product_id, interaction_type, value, occurred_at)
      select ${tenant.accountId}, u.id, p.id, 'VIEW', 1, ${at.toISOString()}::timestamptz
      from end_users u, products p
      where u.account_id = ${tenant.accountId} and u.external_id = 'mover'
        and p.account_id = ${tenant.accountId} and p.external_id = 'p1'`);
    cache.recorded(tenant.accountId, "mover", first.endUserId!, [
      { externalProductId: "p1", interactionType: "VIEW", value: 1, occurredAt: at },
    ]);
    const updated = cache.loaded(tenant.accountId, "mover")!;
    expect(updated.interacted).toEqual(["p3", "p1"]);
    now += 31_000;
    const reread = await cache.get(tenant.accountId, "mover");
    expect(reread).toBe(updated);
  });
});
