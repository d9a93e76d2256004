import { afterAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../../src/config";
import { createDeps } from "../../src/deps";
import { BUILT_IN_PLANS } from "../../src/modules/plans/catalog";
import { createTestContext, sharedTestContext, type TestContext } from "../helpers/context";
import { rejectionOf } from "../helpers/rejection";
import { trackTempDir } from "../helpers/temp-dirs";

const custom = {
  FREE: {
    name: "FREE",
    priceMonthly: 0,
    currency: "EUR",
    limits: { requestsPerMinute: 5, monthlyRequests: 50, maxProducts: 3, maxEndUsers: 2, trainingsPerDay: 1 },
    features: ["tiny"],
  },
  GOLD: {
    name: "GOLD",
    priceMonthly: 10,
    currency: "EUR",
    limits: {
      requestsPerMinute: 50,
      monthlyRequests: 500,
      maxProducts: 30,
      maxEndUsers: 20,
      trainingsPerDay: 5,
      bulkPerMinute: 2,
      bulkPerHour: 3,
      bulkPerDay: 4,
    },
    features: ["bigger"],
  },
};

function writePlans(content: unknown): string {
  const path = join(tmpdir(), `plans-${crypto.randomUUID()}.json`);
  writeFileSync(path, typeof content === "string" ? content : JSON.stringify(content));
  trackTempDir(path);
  return path;
}

const opened: TestContext[] = [];
afterAll(async () => {
  for (const ctx of opened) await ctx.close();
});

describe("GET /api/v1/plans/", () => {
  test("answers the built-in plans keyed by name without authentication", async () => {
    const ctx = await sharedTestContext();
    const res = await ctx.request("GET", "/api/v1/plans/");
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(["FREE", "STARTER", "PRO", "ENTERPRISE"]);
    expect(res.body).toEqual(BUILT_IN_PLANS);
    expect(res.body.FREE.priceMonthly).toBe(0);
    expect(res.body.PRO.limits.requestsPerMinute).toBeGreaterThan(res.body.FREE.limits.requestsPerMinute);
  });

  test("higher plans never have lower limits than lower ones", () => {
    const order = ["FREE", "STARTER", "PRO", "ENTERPRISE"] as const;
    for (let i = 1; i < order.length; i++) {
      const lower = BUILT_IN_PLANS[order[i - 1]!]!.limits;
      const higher = BUILT_IN_PLANS[order[i]!]!.limits;
      for (const key of [
        "requestsPerMinute",
        "monthlyRequests",
        "maxProducts",
        "maxEndUsers",
        "trainingsPerDay",
      ] as const) {
        expect(higher[key]).toBeGreaterThanOrEqual(lower[key]);
      }
    }
  });

  test("is described in the OpenAPI document", async () => {
    const ctx = await sharedTestContext();
    const res = await ctx.request("GET", "/api/v1/public-openapi.json");
    const operation = res.body.paths["/api/v1/plans/"]?.get;
    expect(operation).toBeDefined();
    expect(operation.summary).toBeTruthy();
  });

  test("serves the PLANS_FILE table instead of the built-in one", async () => {
    const ctx = await createTestContext({ PLANS_FILE: writePlans(custom) });
    opened.push(ctx);
    const res = await ctx.request("GET", "/api/v1/plans/");
    expect(res.status).toBe(200);
    expect(res.body).toEqual(custom);
  });

  test("TRAININGS_PER_DAY holds every plan to it, as enforced and as shown", async () => {
    const ctx = await createTestContext({ PLANS_FILE: writePlans(custom), TRAININGS_PER_DAY: "2" });
    opened.push(ctx);
    const res = await ctx.request("GET", "/api/v1/plans/");
    expect(res.body.FREE.limits.trainingsPerDay).toBe(1);
    expect(res.body.GOLD.limits.trainingsPerDay).toBe(2);
    expect(res.body.GOLD.limits.bulkPerMinute).toBe(2);
  });

  test("every built-in plan has the specification's bulk-ingestion rate (10/min, 100/h, 1000/day)", () => {
    for (const plan of Object.values(BUILT_IN_PLANS)) {
      expect(plan.limits.bulkPerMinute).toBeUndefined();
      expect(plan.limits.bulkPerHour).toBeUndefined();
      expect(plan.limits.bulkPerDay).toBeUndefined();
    }
  });
});

describe("PLANS_FILE validation at start-up", () => {
  const start = (content: unknown) => {
    const dataDir = join(tmpdir(), `rs-plans-${crypto.randomUUID()}`);
    trackTempDir(dataDir);
    return createDeps(
      loadConfig({
        DATA_DIR: dataDir,
        JWT_SECRET: "test-secret-test-secret-test-secret-0123456789",
        PLANS_FILE: writePlans(content),
        LOG_LEVEL: "silent",
      }),
      { pgliteDataDir: "memory://" },
    );
  };

  test("a file that is not JSON stops start-up naming PLANS_FILE", async () => {
    expect((await rejectionOf(start("{ not json"))).message).toMatch(/PLANS_FILE/);
  });

  test("a plan with a missing or negative limit stops start-up naming PLANS_FILE and the field", async () => {
    const broken = structuredClone(custom) as Record<string, { limits: Record<string, unknown> }>;
    broken.GOLD!.limits.requestsPerMinute = -1;
    expect((await rejectionOf(start(broken))).message).toMatch(/PLANS_FILE.*GOLD\/limits\/requestsPerMinute/);
    delete broken.GOLD!.limits.requestsPerMinute;
    expect((await rejectionOf(start(broken))).message).toMatch(/PLANS_FILE/);
  });

  test("a table without FREE, or with a key different from the plan name, stops start-up", async () => {
    expect((await rejectionOf(start({ GOLD: custom.GOLD }))).message).toMatch(/PLANS_FILE.*FREE/);
    expect((await rejectionOf(start({ FREE: custom.FREE, SILVER: custom.GOLD }))).message).toMatch(
      /PLANS_FILE.*SILVER/,
    );
  });

  test("unknown fields in a plan stop start-up", async () => {
    expect((await rejectionOf(start({ FREE: { ...custom.FREE, discount: 5 } }))).message).toMatch(
      /PLANS_FILE/,
    );
  });
});
