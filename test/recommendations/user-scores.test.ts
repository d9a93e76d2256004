import { beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { denseHistory } from "../../src/engine/ranking/components";
import { scoreForUser } from "../../src/engine/ranking/personal";
import { topK } from "../../src/engine/topk";
import { sharedTestContext, type TestContext } from "../helpers/context";
import { registerTenant, type Tenant } from "../helpers/tenant";
import { FAST_TRAINING, generateTenant, trainAndWait } from "../pipeline/fixtures";
import { ids } from "./fixtures";

// A trained tenant for the suite; training and PGlite are slow on shared machines.
setDefaultTimeout(60_000);

const QUERY = "/api/v1/recommendations/personalized/query";

let ctx: TestContext;
let tenant: Tenant;

/**
 * An EASE model: its collaborative scores for a user are computed whole into a buffer the model shares
 * between users (see serving/snapshot-signals.ts).
 */
beforeAll(async () => {
  ctx = await sharedTestContext();
  tenant = await registerTenant(ctx);
  await generateTenant(ctx, tenant.accountId, { users: 60, interactionsPerUser: 15 });
  const job = await trainAndWait(ctx, tenant.apiKey, { ...FAST_TRAINING, algorithm: "ease" });
  expect(job.status).toBe("completed");
}, 180_000);

/** The user's page as training's evaluation ranks it: the model's tuned blend, own items left out. */
async function expectedPage(user: string, limit: number): Promise<string[]> {
  const view = await ctx.deps.recommendations.view(tenant.accountId);
  const model = view.snapshot!.model;
  const history = await ctx.deps.recommendations.histories.get(tenant.accountId, user);
  const dense = denseHistory(view.table, history, model.weights);
  expect(dense.items.length).toBeGreaterThan(0);
  const scores = scoreForUser(model, dense);
  return [...topK(scores, limit, null, Int32Array.from(dense.items))].map((i) => view.table.externalIds[i]!);
}

async function personalised(user: string, limit: number): Promise<string[]> {
  const res = await ctx.request("POST", QUERY, {
    apiKey: tenant.apiKey,
    body: { external_user_id: user, limit, include_explanation: true },
  });
  expect(res.status).toBe(200);
  return ids(res.body);
}

describe("personalised answers of an EASE model", () => {
  test("a user's later answers are ranked with their own scores, whoever was answered in between", async () => {
    const view = await ctx.deps.recommendations.view(tenant.accountId);
    expect(view.snapshot!.model.ease).toBeDefined();
    // Users favouring different categories (generateTenant: user u-N favours category N mod 4).
    const users = ["u-1", "u-2", "u-3"];
    for (const user of users) expect(await personalised(user, 10)).toEqual(await expectedPage(user, 10));
    // Other page sizes are ranked again (not the cached pages) from each user's already-read history.
    for (const limit of [8, 6]) {
      for (const user of users) {
        expect(await personalised(user, limit)).toEqual(await expectedPage(user, limit));
      }
    }
  });
});
