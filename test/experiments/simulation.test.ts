/**
 * A simulated shop run end to end over a real socket: end users ask for personalised recommendations while an
 * A/B experiment runs, click what they are shown with a probability that depends on the arm that served them,
 * and the shop reads the results after every batch, as it may with an always-valid test. The statistics'
 * own behaviour (false positives over hundreds of A/A runs, the +20% arm within the expected size) is checked
 * in-process in test/stats/sequential.test.ts; this run shows the whole path: assignment, logging,
 * attribution, aggregates and the verdict.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { createRng } from "../../src/engine/rng";
import { createTestContext, type TestContext } from "../helpers/context";
import type { Tenant } from "../helpers/tenant";
import { catalogue, createShop } from "../recommendations/fixtures";

let ctx: TestContext;
let base = "";

beforeAll(async () => {
  ctx = await createTestContext({ HOST: "127.0.0.1" });
  ctx.app.listen({ port: 0, hostname: "127.0.0.1" });
  base = `http://127.0.0.1:${ctx.app.server?.port ?? 0}`;
}, 120_000);

afterAll(async () => {
  await ctx.app.stop();
  await ctx.close();
});

async function call(tenant: Tenant, method: string, path: string, body?: unknown): Promise<any> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: {
      "x-api-key": tenant.apiKey,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return res.json();
}

describe("a simulated A/B experiment through the HTTP API", () => {
  test("users of arm B click three times as often; the shop, looking after every batch, is told B is better", async () => {
    const { tenant } = await createShop(ctx, catalogue(30));
    // A shop on a plan that admits this many requests a minute.
    await ctx.deps.database.db.execute(
      sql`update accounts set plan = 'ENTERPRISE', subscription_status = 'active' where id = ${tenant.accountId}`,
    );
    await ctx.deps.identity.accounts.changed(tenant.accountId);
    const experiment = await call(tenant, "POST", "/api/v1/experiments/", {
      name: "Simulated",
      endpoint: "personalized/query",
      variants: [
        { name: "A", traffic: 0.5 },
        { name: "B", traffic: 0.5, overrides: { recommendation_goal: "discovery" } },
      ],
      minimum_effect: 0.5,
    });
    const clickRate: Record<string, number> = { A: 0.05, B: 0.15 };
    const rng = createRng(2026);
    const sent = { A: { impressions: 0, clicks: 0 }, B: { impressions: 0, clicks: 0 } } as Record<
      string,
      { impressions: number; clicks: number }
    >;
    let results: any;
    const verdicts: string[] = [];
    for (let batch = 0; batch < 12; batch++) {
      for (let u = 0; u < 40; u++) {
        const user = `visitor-${batch}-${u}`;
        const answer = await call(tenant, "POST", "/api/v1/recommendations/personalized/query", {
          external_user_id: user,
          limit: 5,
        });
        const arm = answer.experiment.variant as string;
        sent[arm]!.impressions += answer.items.length;
        for (const item of answer.items as { externalId: string }[]) {
          if (rng() >= clickRate[arm]!) continue;
          sent[arm]!.clicks++;
          await call(tenant, "POST", "/api/v1/interactions/", {
            external_user_id: user,
            external_product_id: item.externalId,
            interaction_type: "CLICK",
            recommendation_id: answer.recommendationId,
          });
        }
      }
      // The service credits within about a second; the test does not wait for the timer.
      await ctx.deps.attributions.flush();
      results = await call(tenant, "GET", `/api/v1/experiments/${experiment.id}/results`);
      verdicts.push(results.verdict);
      if (results.verdict !== "keep running") break;
    }
    expect(verdicts[0]).toBe("keep running");
    expect(results.verdict).toBe("B is better");
    expect(results.comparisons[0]).toMatchObject({
      variant: "B",
      against: "A",
      decision: "treatment_better",
    });
    expect(results.comparisons[0].confidenceSequence.low).toBeGreaterThan(0);
    expect(results.impressionsNeeded).toBe(0);
    // No write of the logs or credits failed (a failed one would be retried, but must not happen here).
    expect(ctx.logs.filter((line) => line.includes("flush failed"))).toEqual([]);
    // What the shop was shown and clicked is exactly what the arms count.
    for (const arm of results.arms as { variant: string; impressions: number; clicks: number }[]) {
      expect([arm.variant, arm.impressions, arm.clicks]).toEqual([
        arm.variant,
        sent[arm.variant]!.impressions,
        sent[arm.variant]!.clicks,
      ]);
    }
    const ctr = (arm: string) =>
      results.arms.find((a: { variant: string }) => a.variant === arm).clickThroughRate;
    expect(ctr("B").value).toBeGreaterThan(ctr("A").value);
  }, 180_000);
});
