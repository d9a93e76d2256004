import { describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { decidePublication } from "../../src/training/decide";
import type { RankingFigures } from "../../src/training/worker-protocol";
import { sharedTestContext } from "../helpers/context";
import { registerTenant } from "../helpers/tenant";
import { FAST_TRAINING, generateTenant, trainAndWait } from "./fixtures";

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

  test("a later model is compared on the same hold-out with the published configuration refit there", () => {
    const current = { id: 7, metrics: { ndcgAt10: 0.9 } };
    const refit = {
      outcome: { modelId: 7, method: "refit-on-same-split" as const, note: null },
      metrics: figures(0.3),
    };
    expect(decidePublication(current, figures(0.31), refit)).toMatchObject({
      published: true,
      comparedOn: "same-holdout",
      publishedEvaluation: "refit-on-same-split",
      newNdcgAt10: 0.31,
      publishedNdcgAt10: 0.3,
      previousModelId: 7,
    });
    const worse = decidePublication(current, figures(0.29), refit);
    expect(worse).toMatchObject({ published: false, comparedOn: "same-holdout", publishedNdcgAt10: 0.3 });
    expect(worse.reason).toContain("same hold-out");
    const same = {
      outcome: { modelId: 7, method: "identical-configuration" as const, note: null },
      metrics: figures(0.3),
    };
    expect(decidePublication(current, figures(0.3), same)).toMatchObject({
      published: true,
      comparedOn: "same-holdout",
      publishedEvaluation: "identical-configuration",
    });
  });

  test("without a reproducible same-hold-out figure the stored figure is used, and the reason says why", () => {
    const current = { id: 7, metrics: { ndcgAt10: 0.3 } };
    const notReproducible = {
      outcome: {
        modelId: 7,
        method: "not-reproducible" as const,
        note: "its params do not record the blend weights",
      },
      metrics: null,
    };
    const fallback = decidePublication(current, figures(0.29), notReproducible);
    expect(fallback).toMatchObject({
      published: false,
      comparedOn: "stored-metrics",
      publishedNdcgAt10: 0.3,
    });
    expect(fallback.reason).toContain("blend weights");
    // Another model was published while this run trained: its figure on this hold-out is unknown.
    const raced = {
      outcome: { modelId: 6, method: "refit-on-same-split" as const, note: null },
      metrics: figures(0.1),
    };
    const racedDecision = decidePublication(current, figures(0.29), raced);
    expect(racedDecision).toMatchObject({
      published: false,
      comparedOn: "stored-metrics",
      publishedNdcgAt10: 0.3,
    });
    expect(racedDecision.reason).toContain("published while this run trained");
  });

  test("on stored figures a later model is published only when its NDCG@10 is at least the published one's", () => {
    const current = { id: 7, metrics: { ndcgAt10: 0.3 } };
    expect(decidePublication(current, figures(0.3))).toMatchObject({
      published: true,
      comparedOn: "stored-metrics",
      publishedEvaluation: "stored-metrics",
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

  test("a model trained after end users were erased replaces one trained before, whatever the figures", () => {
    const current = { id: 7, metrics: { ndcgAt10: 0.3 }, erasuresSeen: 2 };
    const refit = {
      outcome: { modelId: 7, method: "refit-on-same-split" as const, note: null },
      metrics: figures(0.3),
    };
    const worse = decidePublication(current, figures(0.2), refit, 3);
    expect(worse).toMatchObject({
      published: true,
      comparedOn: "same-holdout",
      newNdcgAt10: 0.2,
      publishedNdcgAt10: 0.3,
      previousModelId: 7,
    });
    expect(worse.reason).toContain("erased");
    expect(decidePublication(current, figures(null), refit, 3).published).toBe(true);
    // The same erasures seen by both: the figures decide.
    expect(decidePublication(current, figures(0.2), refit, 2).published).toBe(false);
    // A model stored before erasures were counted saw none.
    expect(decidePublication({ id: 7, metrics: { ndcgAt10: 0.3 } }, figures(0.2), refit, 1).published).toBe(
      true,
    );
  });
});

describe("publication through the API", () => {
  test("a second training is compared on the same hold-out: same configuration → equal figures, no extra fit", async () => {
    const ctx = await sharedTestContext();
    const tenant = await registerTenant(ctx);
    await generateTenant(ctx, tenant.accountId);
    const first = await trainAndWait(ctx, tenant.apiKey);
    expect(first.metrics?.decision).toMatchObject({
      published: true,
      comparedOn: "first-model",
      publishedEvaluation: null,
      previousModelId: null,
    });
    const second = await trainAndWait(ctx, tenant.apiKey);
    expect(second.status).toBe("completed");
    expect(second.metrics?.ndcgAt10).not.toBeNull();
    expect(second.metrics?.decision).toMatchObject({
      published: true,
      comparedOn: "same-holdout",
      publishedEvaluation: "identical-configuration",
      newNdcgAt10: second.metrics?.ndcgAt10,
      publishedNdcgAt10: second.metrics?.ndcgAt10,
      previousModelId: first.modelId,
    });
  }, 120_000);

  test("a worse configuration is stored but not published; the published one is refit on the same split", async () => {
    const ctx = await sharedTestContext();
    const tenant = await registerTenant(ctx);
    await generateTenant(ctx, tenant.accountId);
    const first = await trainAndWait(ctx, tenant.apiKey);
    const firstModel = first.modelId!;
    const tiny = { algorithm: "als", factors: 4, iterations: 1, regularization: 10 };
    const worse = await trainAndWait(ctx, tenant.apiKey, tiny);
    expect(worse.status).toBe("completed");
    const decision = worse.metrics?.decision as
      | { newNdcgAt10: number | null; publishedNdcgAt10: number | null; reason: string }
      | undefined;
    expect(decision).toMatchObject({
      published: false,
      comparedOn: "same-holdout",
      publishedEvaluation: "refit-on-same-split",
      newNdcgAt10: worse.metrics?.ndcgAt10,
      previousModelId: firstModel,
    });
    // The data did not change, so the refit on this run's split reproduces the first run's own figure.
    expect(decision?.publishedNdcgAt10).toBeCloseTo(first.metrics?.ndcgAt10 as number, 6);
    expect(decision!.newNdcgAt10!).toBeLessThan(decision!.publishedNdcgAt10!);
    expect(decision?.reason).toContain("kept the published model");
    // The status shows the latest completed training, and that it was kept back.
    const status = await ctx.request("GET", "/api/v1/pipeline/status", { apiKey: tenant.apiKey });
    expect(status.body).toMatchObject({ modelId: worse.modelId, published: false });
  }, 120_000);

  test("params that cannot be reproduced fall back to the stored figure (reason says so); a model at least as good replaces it", async () => {
    const ctx = await sharedTestContext();
    const tenant = await registerTenant(ctx);
    await generateTenant(ctx, tenant.accountId);
    const first = await trainAndWait(ctx, tenant.apiKey);
    expect(first.status).toBe("completed");
    const firstModel = first.modelId!;
    expect((await ctx.deps.snapshots.getSnapshot(tenant.accountId))?.modelId).toBe(firstModel);

    // A model whose params record nothing reproducible, with a figure no new run can reach.
    await ctx.deps.database.rows(
      sql`update models set params = '{}'::jsonb, metrics = jsonb_set(metrics, '{ndcgAt10}', '0.999')
          where id = ${firstModel}`,
    );
    const worse = await trainAndWait(ctx, tenant.apiKey, FAST_TRAINING);
    expect(worse.status).toBe("completed");
    expect(worse.metrics?.decision).toMatchObject({
      published: false,
      comparedOn: "stored-metrics",
      publishedEvaluation: "stored-metrics",
      publishedNdcgAt10: 0.999,
      newNdcgAt10: worse.metrics?.ndcgAt10,
      previousModelId: firstModel,
    });
    expect((worse.metrics?.decision as { reason?: string } | undefined)?.reason).toContain(
      "cannot be reproduced",
    );
    const status = await ctx.request("GET", "/api/v1/pipeline/status", { apiKey: tenant.apiKey });
    expect(status.body).toMatchObject({ modelId: worse.modelId, published: false });
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
    expect(better.metrics?.decision).toMatchObject({
      published: true,
      comparedOn: "stored-metrics",
      previousModelId: firstModel,
    });
    const after = await ctx.request("GET", "/api/v1/pipeline/status", { apiKey: tenant.apiKey });
    expect(after.body).toMatchObject({
      modelId: better.modelId,
      version: 3,
      isPublished: true,
      published: true,
    });
    const published = await ctx.deps.database.rows<{ n: number }>(
      sql`select count(*)::int as n from models where account_id = ${tenant.accountId} and is_published`,
    );
    expect(published[0]?.n).toBe(1);
    // The serving snapshot is swapped to the new model in the background.
    while (ctx.deps.snapshots.peekSnapshot(tenant.accountId)?.modelId !== better.modelId) await Bun.sleep(20);
  }, 120_000);
});
