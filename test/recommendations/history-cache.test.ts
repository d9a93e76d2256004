import { describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { HistoryCache } from "../../src/modules/recommendations/history-cache";
import { sharedTestContext } from "../helpers/context";
import { catalogue, createShop, interact } from "./fixtures";

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
    await ctx.deps.database.rows(sql`
      insert into interactions (account_id, end_user_id, product_id, interaction_type, value, occurred_at)
      select ${tenant.accountId}, u.id, p.id, 'PURCHASE', 1, now()
      from end_users u, products p
      where u.account_id = ${tenant.accountId} and u.external_id = 'steady'
        and p.account_id = ${tenant.accountId} and p.external_id = 'p2'`);
    expect(await cache.get(tenant.accountId, "steady")).toBe(first);
    now += 31_000;
    const changed = await cache.get(tenant.accountId, "steady");
    expect(changed).not.toBe(first);
    expect(changed.events.map((e) => e.externalProductId)).toEqual(["p2", "p1"]);
    expect(changed.purchased).toEqual(["p2"]);
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
});
