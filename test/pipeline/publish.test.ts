import { describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { decidePublication } from "../../src/training/decide";
import type { RankingFigures } from "../../src/training/worker-protocol";
import { sharedTestContext } from "../helpers/context";
import { registerTenant } from "../helpers/tenant";
import { generateTenant, trainAndWait } from "./fixtures";

const figures = (ndcgAt10: number | null, note: string | null = null): RankingFigures => ({
  ndcgAt10,
  recallAt20: ndcgAt10,
  coverageAt10: ndcgAt10,
  popularityNdcgAt10: 0.1,
  evaluatedUsers: ndcgAt10 === null ? 2 : 50,
  note,
});

describe("publication rule (decidePublication)", () => {
  test("an account's first model is always published, even when it could not be evaluated", () => {
    expect(decidePublication(undefined, figures(0.2))).toMatchObject({
      published: true,
      comparedOn: "first-model",
    });
    const tiny = decidePublication(undefined, figures(null, "insufficient data"));
    expect(tiny).toMatchObject({ published: true, comparedOn: "first-model", newNdcgAt10: null });
    expect(tiny.reason).toContain("insufficient data");
  });

  test("a later model is published only when its NDCG@10 is at least the published one's", () => {
    const current = { id: 7, metrics: { ndcgAt10: 0.3 } };
    expect(decidePublication(current, figures(0.3))).toMatchObject({
      published: true,
      comparedOn: "stored-metrics",
      newNdcgAt10: 0.3,
      publishedNdcgAt10: 0.3,
      previousModelId: 7,
    });
    expect(decidePublication(current, figures(0.31)).published).toBe(true);
    expect(decidePublication(current, figures(0.29))).toMatchObject({
      published: false,
      publishedNdcgAt10: 0.3,
    });
  });

  test("an unevaluable new model does not replace an evaluated one; an unevaluated published one is replaced", () => {
    expect(decidePublication({ id: 1, metrics: { ndcgAt10: 0.3 } }, figures(null)).published).toBe(false);
    expect(decidePublication({ id: 1, metrics: { ndcgAt10: null } }, figures(0.1)).published).toBe(true);
    expect(decidePublication({ id: 1, metrics: { ndcgAt10: null } }, figures(null)).published).toBe(true);
  });
});

describe("publication through the API", () => {
  test("a worse model is stored but not published (job records both figures); a model at least as good replaces it", async () => {
    const ctx = await sharedTestContext();
    const tenant = await registerTenant(ctx);
    await generateTenant(ctx, tenant.accountId);
    const first = await trainAndWait(ctx, tenant.apiKey);
    expect(first.status).toBe("completed");
    const firstModel = first.modelId!;
    expect((await ctx.deps.snapshots.getSnapshot(tenant.accountId))?.modelId).toBe(firstModel);

    // Make the published model look unbeatable: the next run, on the same data, must not replace it.
    await ctx.deps.database.rows(
      sql`update models set metrics = jsonb_set(metrics, '{ndcgAt10}', '0.999') where id = ${firstModel}`,
    );
    const worse = await trainAndWait(ctx, tenant.apiKey);
    expect(worse.status).toBe("completed");
    expect(worse.metrics?.decision).toMatchObject({
      published: false,
      comparedOn: "stored-metrics",
      publishedNdcgAt10: 0.999,
      newNdcgAt10: worse.metrics?.ndcgAt10,
      previousModelId: firstModel,
    });
    const status = await ctx.request("GET", "/api/v1/pipeline/status", { apiKey: tenant.apiKey });
    expect(status.body.modelId).toBe(firstModel);
    const listed = await ctx.request("GET", "/api/v1/pipeline/models", { apiKey: tenant.apiKey });
    expect(
      listed.body.map((m: { modelId: number; isPublished: boolean }) => [m.modelId, m.isPublished]),
    ).toEqual([
      [worse.modelId, false],
      [firstModel, true],
    ]);
    expect(ctx.deps.snapshots.peekSnapshot(tenant.accountId)?.modelId).toBe(firstModel);

    await ctx.deps.database.rows(
      sql`update models set metrics = jsonb_set(metrics, '{ndcgAt10}', '0') where id = ${firstModel}`,
    );
    const better = await trainAndWait(ctx, tenant.apiKey);
    expect(better.metrics?.decision).toMatchObject({ published: true, previousModelId: firstModel });
    const after = await ctx.request("GET", "/api/v1/pipeline/status", { apiKey: tenant.apiKey });
    expect(after.body).toMatchObject({ modelId: better.modelId, version: 3, isPublished: true });
    const published = await ctx.deps.database.rows<{ n: number }>(
      sql`select count(*)::int as n from models where account_id = ${tenant.accountId} and is_published`,
    );
    expect(published[0]?.n).toBe(1);
    // The serving snapshot is swapped to the new model in the background.
    while (ctx.deps.snapshots.peekSnapshot(tenant.accountId)?.modelId !== better.modelId) await Bun.sleep(20);
  }, 120_000);
});
