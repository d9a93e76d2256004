import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createTestContext, type TestContext } from "../helpers/context";
import { registerTenant } from "../helpers/tenant";

// Two apps in one process, as the two-instance tests and embedders run them: each has its own event buses,
// so a write in one never reaches the other's caches (on Postgres they share the database, and still only
// erasures cross, through NOTIFY).
let a: TestContext;
let b: TestContext;

beforeAll(async () => {
  a = await createTestContext();
  b = await createTestContext();
}, 120_000);

afterAll(async () => {
  await a?.close();
  await b?.close();
});

/** Every event each bus of the context hears, by bus name. */
function record(ctx: TestContext): { heard: Record<string, unknown[]>; stop(): void } {
  const heard: Record<string, unknown[]> = {};
  const stops = Object.entries(ctx.deps.events).map(([name, bus]) => {
    heard[name] = [];
    return (bus as { on(listener: (event: unknown) => void): () => void }).on((event) =>
      heard[name]?.push(event),
    );
  });
  return {
    heard,
    stop: () => {
      for (const stop of stops) stop();
    },
  };
}

describe("one set of event buses per app", () => {
  test("the apps do not share a bus", () => {
    expect(a.deps.events).not.toBe(b.deps.events);
    expect(a.deps.events.interactionsRecorded).not.toBe(b.deps.events.interactionsRecorded);
  });

  test("products, end-user and interaction writes in app A are heard by A only", async () => {
    const tenant = await registerTenant(a);
    const inA = record(a);
    const inB = record(b);
    try {
      const product = await a.request("POST", "/api/v1/products/", {
        apiKey: tenant.apiKey,
        body: { externalId: "p-1", name: "One", price: 5, category: "c" },
      });
      expect(product.status).toBe(201);
      const interaction = await a.request("POST", "/api/v1/interactions/", {
        apiKey: tenant.apiKey,
        body: { external_user_id: "u-1", external_product_id: "p-1", interaction_type: "CLICK" },
      });
      expect(interaction.status).toBe(200);
      const patched = await a.request("PATCH", "/api/v1/end-users/external/u-1", {
        apiKey: tenant.apiKey,
        body: { priceRangeMax: 50 },
      });
      expect(patched.status).toBe(200);

      expect(inA.heard.productsChanged).toEqual([
        { accountId: tenant.accountId, externalIds: ["p-1"], deleted: false },
      ]);
      expect(inA.heard.interactionsRecorded).toHaveLength(1);
      expect(inA.heard.interactionsRecorded?.[0]).toMatchObject({
        accountId: tenant.accountId,
        externalUserId: "u-1",
      });
      expect(inA.heard.endUserUpdated).toEqual([{ accountId: tenant.accountId, externalId: "u-1" }]);
      expect(inB.heard).toEqual({
        interactionsRecorded: [],
        productsChanged: [],
        endUserErased: [],
        endUserUpdated: [],
      });
    } finally {
      inA.stop();
      inB.stop();
    }
  });
});
