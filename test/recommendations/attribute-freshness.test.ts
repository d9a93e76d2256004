import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { sharedTestContext } from "../helpers/context";
import { FAST_TRAINING, trainAndWait } from "../pipeline/fixtures";
import { catalogue, createShop, ids, interact } from "./fixtures";

setDefaultTimeout(60_000);

const QUERY = "/api/v1/recommendations/personalized/query";

describe("attribute filters with a trained model", () => {
  test("an attribute edit after training is in the next filtered answers, as after a restart", async () => {
    const ctx = await sharedTestContext();
    // p1..p12: even ones red, odd ones blue; none green.
    const { tenant } = await createShop(ctx, catalogue(12));
    for (let u = 0; u < 6; u++) {
      for (let k = 0; k < 4; k++)
        await interact(ctx, tenant, `fan-${u}`, `p${1 + ((u + k * 3) % 12)}`, "VIEW");
    }
    const job = await trainAndWait(ctx, tenant.apiKey, FAST_TRAINING);
    expect(job.status).toBe("completed");

    const ask = (filters?: unknown) =>
      ctx.request("POST", QUERY, {
        apiKey: tenant.apiKey,
        body: {
          external_user_id: "shopper",
          strategy: "popularity",
          limit: 50,
          ...(filters ? { filters } : {}),
        },
      });
    const colour = (value: string) => ({ filters: [{ field: "attributes.color", op: "eq", value }] });
    // Both filters asked for once: the snapshot's attributes are read now, before the edits.
    expect(ids((await ask(colour("green"))).body)).toEqual([]);
    expect(ids((await ask(colour("red"))).body)).toContain("p4");

    for (const product of ["p3", "p4"]) {
      const patched = await ctx.request("PATCH", `/api/v1/products/external/${product}`, {
        apiKey: tenant.apiKey,
        body: { name: `Green ${product}`, attributes: { color: "green" } },
      });
      expect(patched.status).toBe(200);
    }
    // The next answer is over the edited catalogue.
    const all = await ask();
    expect(all.body.items.some((i: { externalId: string; name: string }) => i.name === "Green p4")).toBe(
      true,
    );

    expect(ids((await ask(colour("green"))).body).sort()).toEqual(["p3", "p4"]);
    const red = ids((await ask(colour("red"))).body);
    expect(red).not.toContain("p4");
    expect(red).toContain("p2");
  });
});
