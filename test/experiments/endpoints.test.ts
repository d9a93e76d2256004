/**
 * Experiments on every recommendation endpoint (presets, similar products, category listings) and arms that
 * pin a stored model version: what each endpoint's arms may override, how the listings (which name no end
 * user) are assigned, and a pinned version ranking its arm while everyone else keeps the published model.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { assignArm } from "../../src/modules/experiments/assignment";
import { sharedTestContext, type TestContext, usingPostgres } from "../helpers/context";
import { registerTenant, type Tenant } from "../helpers/tenant";
import { generateTenant, trainAndWait } from "../pipeline/fixtures";
import { catalogue, createShop } from "../recommendations/fixtures";

beforeAll(() => sharedTestContext().then(() => undefined), 120_000);

const BASE = "/api/v1/experiments";
const REC = "/api/v1/recommendations";

interface Created {
  id: number;
  variants: { name: string; traffic: number }[];
}

async function start(ctx: TestContext, tenant: Tenant, endpoint: string, overrides: Record<string, unknown>) {
  const res = await ctx.request<Created>("POST", `${BASE}/`, {
    apiKey: tenant.apiKey,
    body: {
      name: `On ${endpoint}`,
      endpoint,
      variants: [
        { name: "A", traffic: 0.5 },
        { name: "B", traffic: 0.5, overrides },
      ],
    },
  });
  expect(res.status).toBe(201);
  return res.body;
}

async function loggedArms(ctx: TestContext, accountId: number, endpoint: string) {
  await ctx.deps.recommendations.logs.flush();
  return ctx.deps.database.rows<{
    recommendation_id: string;
    experiment_id: number | null;
    experiment_arm: string | null;
    model_variant: string | null;
  }>(sql`
    select recommendation_id::text, experiment_id, experiment_arm, model_variant from recommendation_logs
    where account_id = ${accountId} and endpoint = ${endpoint}`);
}

/** Marks a model as having no stored figures, so that the next training is published over it. */
async function supersedable(ctx: TestContext, modelId: number): Promise<void> {
  await ctx.deps.database.rows(sql`update models set metrics = '{}'::jsonb where id = ${modelId}`);
}

describe("experiments on every recommendation endpoint", () => {
  test("an override that does not act on the endpoint is a 422 naming the arm and the override", async () => {
    const ctx = await sharedTestContext();
    const { tenant } = await createShop(ctx, catalogue(3));
    for (const [endpoint, override] of [
      ["ecommerce/homepage", { strategy: "popularity" }],
      ["ecommerce/cart", { recommendation_goal: "revenue" }],
      ["products/similar", { model_variant: "diverse" }],
      ["category", { strategy: "collab" }],
    ] as const) {
      const res = await ctx.request("POST", `${BASE}/`, {
        apiKey: tenant.apiKey,
        body: {
          name: "x",
          endpoint,
          variants: [
            { name: "A", traffic: 0.5 },
            { name: "B", traffic: 0.5, overrides: override },
          ],
        },
      });
      expect(res.status).toBe(422);
      expect(res.body.errorCode).toBe("VALIDATION_ERROR");
      expect(res.body.detail).toEqual([
        {
          loc: ["body", "variants", 1, "overrides", Object.keys(override)[0]],
          msg: expect.stringContaining(`Does not apply to ${endpoint}`),
          type: "value_error.override_not_applicable",
        },
      ]);
    }
    const list = await ctx.request("GET", `${BASE}/`, { apiKey: tenant.apiKey });
    expect(list.body.items).toEqual([]);
  });

  test("a preset's arms are assigned by end user, the diverse override applies, and the log names the arm", async () => {
    const ctx = await sharedTestContext();
    const { tenant } = await createShop(ctx, catalogue(20));
    const created = await start(ctx, tenant, "ecommerce/homepage", { model_variant: "diverse" });
    const served = new Map<string, string>();
    for (let n = 0; n < 10; n++) {
      const user = `shopper-${n}`;
      const res = await ctx.request("POST", `${REC}/ecommerce/homepage`, {
        apiKey: tenant.apiKey,
        body: { external_user_id: user, limit: 4 },
      });
      expect(res.status).toBe(200);
      const expected = assignArm(created.id, user, created.variants).name;
      expect(res.body.experiment).toEqual({ id: created.id, variant: expected, modelVersion: null });
      served.set(res.body.recommendationId, expected);
    }
    // Another preset has no experiment: its answers are not labelled.
    const cart = await ctx.request("POST", `${REC}/ecommerce/cart`, {
      apiKey: tenant.apiKey,
      body: { external_user_id: "shopper-1" },
    });
    expect(cart.body.experiment).toBeUndefined();
    const rows = await loggedArms(ctx, tenant.accountId, "ecommerce/homepage");
    expect(rows).toHaveLength(10);
    for (const row of rows) {
      const arm = served.get(row.recommendation_id);
      expect(row).toMatchObject({ experiment_id: created.id, experiment_arm: arm });
      expect(row.model_variant).toBe(arm === "B" ? "diverse" : null);
    }
  });

  test("listings are assigned by the end user sent with them; without one they are served outside the experiment", async () => {
    const ctx = await sharedTestContext();
    const { tenant } = await createShop(ctx, catalogue(20));
    const similar = await start(ctx, tenant, "products/similar", {});
    const category = await start(ctx, tenant, "category", {});
    for (const [experiment, path] of [
      [similar, `${REC}/products/external/p1/similar?limit=3`],
      [category, `${REC}/category/electronics?limit=3`],
    ] as const) {
      for (const user of ["v-1", "v-2", "v-3"]) {
        const res = await ctx.request("GET", `${path}&external_user_id=${user}`, { apiKey: tenant.apiKey });
        expect(res.status).toBe(200);
        const expected = assignArm(experiment.id, user, experiment.variants).name;
        expect(res.body.experiment).toEqual({ id: experiment.id, variant: expected, modelVersion: null });
      }
      const anonymous = await ctx.request("GET", path, { apiKey: tenant.apiKey });
      expect(anonymous.status).toBe(200);
      expect(anonymous.body.experiment).toBeUndefined();
    }
    const rows = await loggedArms(ctx, tenant.accountId, "category");
    expect(rows.filter((r) => r.experiment_id === category.id)).toHaveLength(3);
    expect(rows.filter((r) => r.experiment_id === null)).toHaveLength(1);
  });
});

describe("pinning a model version in an arm", () => {
  test("the pinned arm ranks with its version (kept after a newer publication), everyone else with the published one", async () => {
    const ctx = await sharedTestContext();
    const tenant = await registerTenant(ctx);
    // A paid plan: this test sends more requests than FREE's 60 a minute.
    await ctx.deps.database.rows(
      sql`update accounts set plan = 'PRO', subscription_status = 'active' where id = ${tenant.accountId}`,
    );
    await ctx.deps.identity.accounts.changed(tenant.accountId);
    await generateTenant(ctx, tenant.accountId);
    const first = await trainAndWait(ctx, tenant.apiKey);
    expect(first.status).toBe("completed");
    const models = await ctx.request("GET", "/api/v1/pipeline/models", { apiKey: tenant.apiKey });
    const v1 = models.body.find((m: { modelId: number }) => m.modelId === first.modelId).version as number;
    const pinned = await start(ctx, tenant, "personalized/query", { model_version: v1 });
    const listing = await start(ctx, tenant, "products/similar", { model_version: v1 });

    await supersedable(ctx, first.modelId!);
    const second = await trainAndWait(ctx, tenant.apiKey);
    expect(second.metrics?.decision).toMatchObject({ published: true });
    const [published] = await ctx.deps.database.rows<{ version: number }>(
      sql`select version from models where id = ${second.modelId}`,
    );
    const v2 = published!.version;
    expect(v2).toBeGreaterThan(v1);
    // Pinned by a running experiment: its artifact outlives the publication of a newer model.
    const [row] = await ctx.deps.database.rows<{ artifact_bytes: number | string }>(
      sql`select artifact_bytes from models where id = ${first.modelId}`,
    );
    if (!usingPostgres()) {
      const file = await ctx.deps.artifacts.file(
        tenant.accountId,
        first.modelId!,
        Number(row!.artifact_bytes),
      );
      expect(file).toBeDefined();
    }

    const seen = new Set<string>();
    for (let n = 0; n < 12; n++) {
      const user = `u-${n}`;
      const arm = assignArm(pinned.id, user, pinned.variants).name;
      seen.add(arm);
      const expected = { id: pinned.id, variant: arm, modelVersion: arm === "B" ? v1 : v2 };
      // Twice: the second answer may come from the page cache, which must keep the arms apart.
      for (let k = 0; k < 2; k++) {
        const res = await ctx.request("POST", `${REC}/personalized/query`, {
          apiKey: tenant.apiKey,
          body: { external_user_id: user, limit: 5 },
        });
        expect(res.status).toBe(200);
        expect(res.body.experiment).toEqual(expected);
        expect(JSON.parse(res.text).experiment).toEqual(expected);
      }
      const similar = await ctx.request(
        "GET",
        `${REC}/products/external/p-0-1/similar?external_user_id=${user}`,
        {
          apiKey: tenant.apiKey,
        },
      );
      const listingArm = assignArm(listing.id, user, listing.variants).name;
      expect(similar.body.experiment).toEqual({
        id: listing.id,
        variant: listingArm,
        modelVersion: listingArm === "B" ? v1 : v2,
      });
    }
    expect(seen).toEqual(new Set(["A", "B"]));
    // Both versions are in memory, within the one snapshot budget; the published one is the account's.
    expect(ctx.deps.snapshots.peekSnapshot(tenant.accountId)?.version).toBe(v2);
    expect(ctx.deps.snapshots.peekModelSnapshot(tenant.accountId, first.modelId!)?.version).toBe(v1);
    // Without an experiment, the published model serves.
    const outside = await ctx.request("POST", `${REC}/ecommerce/homepage`, {
      apiKey: tenant.apiKey,
      body: { external_user_id: "u-1" },
    });
    expect(outside.body.experiment).toBeUndefined();
  }, 180_000);

  test("an unknown version, or one whose artifact is gone, is a 422 naming the arm; another account's version is unknown", async () => {
    const ctx = await sharedTestContext();
    const tenant = await registerTenant(ctx);
    await generateTenant(ctx, tenant.accountId);
    const job = await trainAndWait(ctx, tenant.apiKey);
    expect(job.status).toBe("completed");
    const other = await registerTenant(ctx);
    const pin = (owner: Tenant, version: number) =>
      ctx.request("POST", `${BASE}/`, {
        apiKey: owner.apiKey,
        body: {
          name: "pin",
          endpoint: "ecommerce/homepage",
          variants: [
            { name: "A", traffic: 0.5 },
            { name: "B", traffic: 0.5, overrides: { model_version: version } },
          ],
        },
      });
    for (const [owner, version] of [
      [tenant, 99],
      [other, 1],
    ] as const) {
      const res = await pin(owner, version);
      expect(res.status).toBe(422);
      expect(res.body.errorCode).toBe("VALIDATION_ERROR");
      expect(res.body.detail).toEqual([
        {
          loc: ["body", "variants", 1, "overrides", "model_version"],
          msg: expect.stringContaining(`no model version ${version}`),
          type: "value_error.model_version.unknown",
        },
      ]);
    }
    // A pinned model that cannot be loaded (here: no such model) leaves its arm to the published one.
    const fallback = await ctx.deps.recommendations.view(tenant.accountId, 2147483647);
    expect(fallback.snapshot?.modelId).toBe(job.modelId!);
    // The artifact removed, as the embedded store does once a newer model is published.
    await ctx.deps.artifacts.discard(tenant.accountId, job.modelId!);
    await ctx.deps.database.rows(sql`delete from model_artifact_chunks where model_id = ${job.modelId}`);
    const gone = await pin(tenant, 1);
    expect(gone.status).toBe(422);
    expect(gone.body.detail[0].type).toBe("value_error.model_version.artifact_unavailable");
    const list = await ctx.request("GET", `${BASE}/`, { apiKey: tenant.apiKey });
    expect(list.body.items).toEqual([]);
  }, 120_000);
});
