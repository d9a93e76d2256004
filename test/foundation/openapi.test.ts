import { describe, expect, test } from "bun:test";
import { OPENAPI_PATH } from "../../src/app";
import { sharedTestContext } from "../helpers/context";

type Operation = {
  summary?: string;
  tags?: string[];
  security?: unknown[];
  responses: Record<
    string,
    { content?: Record<string, { schema?: { properties?: Record<string, unknown> } }> }
  >;
};

async function operations(): Promise<[string, Operation][]> {
  const ctx = await sharedTestContext();
  const res = await ctx.request("GET", OPENAPI_PATH);
  expect(res.status).toBe(200);
  const paths = res.body.paths as Record<string, Record<string, Operation>>;
  return Object.entries(paths).flatMap(([path, ops]) =>
    Object.entries(ops).map(([method, op]) => [`${method.toUpperCase()} ${path}`, op] as [string, Operation]),
  );
}

describe("OpenAPI description of every route", () => {
  test("every operation has a summary, a tag and a documented success response", async () => {
    for (const [name, op] of await operations()) {
      expect({ name, summary: Boolean(op.summary) }).toEqual({ name, summary: true });
      expect({ name, tagged: (op.tags ?? []).length > 0 }).toEqual({ name, tagged: true });
      const success = Object.keys(op.responses).filter((code) => /^[23]\d\d$/.test(code));
      expect({ name, success: success.length > 0 }).toEqual({ name, success: true });
    }
  });

  test("authenticated operations document 401, 403 and 429 with the error body", async () => {
    const ops = await operations();
    const secured = ops.filter(([, op]) => (op.security ?? []).length > 0);
    expect(secured.length).toBeGreaterThan(30);
    for (const [name, op] of secured) {
      for (const code of ["401", "403", "429"]) {
        const schema = op.responses[code]?.content?.["application/json"]?.schema;
        expect({ name, code, fields: Object.keys(schema?.properties ?? {}).sort() }).toEqual({
          name,
          code,
          fields: ["errorCode", "message", "requestId"],
        });
      }
    }
  });

  test("operations with input document 422 with the detail array; path parameters document 404", async () => {
    const byName = new Map(await operations());
    const create = byName.get("POST /api/v1/products/");
    expect(create?.responses["422"]?.content?.["application/json"]?.schema?.properties).toHaveProperty(
      "detail",
    );
    expect(byName.get("GET /api/v1/products/external/{external_id}")?.responses).toHaveProperty("404");
    expect(byName.get("GET /health")?.responses).not.toHaveProperty("401");
  });
});
