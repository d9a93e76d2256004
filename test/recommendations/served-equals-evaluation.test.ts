import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { sql } from "drizzle-orm";
import { CANDIDATE_MIN_ITEMS } from "../../src/engine/ranking/candidates";
import { rankForUser } from "../../src/engine/ranking/personal";
import { createTestContext, type TestContext } from "../helpers/context";
import { registerTenant, type Tenant } from "../helpers/tenant";
import { FAST_TRAINING, generateTenant, trainAndWait } from "../pipeline/fixtures";
import { ids } from "./fixtures";

setDefaultTimeout(120_000);

const QUERY = "/api/v1/recommendations/personalized/query";

let ctx: TestContext;
let tenant: Tenant;

/** A catalogue past the candidate threshold, so the route ranks candidates rather than every item. */
beforeAll(async () => {
  ctx = await createTestContext();
  tenant = await registerTenant(ctx);
  await generateTenant(ctx, tenant.accountId, {
    categories: 8,
    productsPerCategory: 300,
    users: 60,
    interactionsPerUser: 25,
  });
  const job = await trainAndWait(ctx, tenant.apiKey, FAST_TRAINING);
  expect(job.status).toBe("completed");
}, 300_000);

afterAll(async () => {
  await ctx?.close();
});

describe("training's evaluation ranks as the route serves", () => {
  test("on a catalogue past the candidate threshold, the route's answer is the evaluation ranking", async () => {
    const snapshot = (await ctx.deps.snapshots.getSnapshot(tenant.accountId))!;
    expect(snapshot.model.nItems).toBeGreaterThan(CANDIDATE_MIN_ITEMS);
    const rows = await ctx.deps.database.rows<{ user: string; product: string }>(sql`
      select eu.external_id as "user", p.external_id as product
      from interactions i join end_users eu on eu.id = i.end_user_id join products p on p.id = i.product_id
      where i.account_id = ${tenant.accountId}`);
    const byUser = new Map<string, Set<string>>();
    for (const r of rows) {
      if (!byUser.has(r.user)) byUser.set(r.user, new Set());
      byUser.get(r.user)!.add(r.product);
    }
    let compared = 0;
    for (const user of ["u-0", "u-5", "u-13", "u-21", "u-34", "u-47"]) {
      const own = [...(byUser.get(user) ?? [])].map((id) => snapshot.items.indexByExternalId.get(id)!);
      expect(own.length).toBeGreaterThan(0);
      // EASE reads a history as a set of items, so the weights do not move this ranking.
      const evaluated = rankForUser(
        snapshot.model,
        { items: Int32Array.from(own), weights: new Float32Array(own.length).fill(1) },
        10,
      );
      const res = await ctx.request("POST", QUERY, {
        apiKey: tenant.apiKey,
        body: { external_user_id: user, limit: 10 },
      });
      expect(res.status).toBe(200);
      expect(ids(res.body)).toEqual(Array.from(evaluated, (i) => snapshot.items.externalIds[i]!));
      // Nothing the user already has is answered, on either side.
      for (const id of ids(res.body)) expect(byUser.get(user)!.has(id)).toBe(false);
      compared++;
    }
    expect(compared).toBe(6);
  });
});
