import { describe, expect, test } from "bun:test";
import SwaggerParser from "@apidevtools/swagger-parser";
import openapiTS, { astToString } from "openapi-typescript";
import { OPENAPI_PATH } from "../../src/app";
import { sharedTestContext } from "../helpers/context";

type Json = Record<string, any>;

async function document(): Promise<Json> {
  const ctx = await sharedTestContext();
  const res = await ctx.request("GET", OPENAPI_PATH);
  expect(res.status).toBe(200);
  return res.body as Json;
}

const operations = (doc: Json): [string, Json][] =>
  Object.entries(doc.paths as Record<string, Record<string, Json>>).flatMap(([path, ops]) =>
    Object.entries(ops).map(([method, op]) => [`${method.toUpperCase()} ${path}`, op] as [string, Json]),
  );

/** Every schema object in the document, with where it sits. */
function* schemas(value: unknown, at = "#"): Generator<[string, Json]> {
  if (typeof value !== "object" || value === null) return;
  if (!Array.isArray(value)) yield [at, value as Json];
  for (const [key, child] of Object.entries(value)) yield* schemas(child, `${at}/${key}`);
}

describe("the OpenAPI document", () => {
  test("validates as OpenAPI 3 with a real validator (@apidevtools/swagger-parser)", async () => {
    const doc = await document();
    expect(doc.openapi).toMatch(/^3\.1\./);
    // The validator dereferences in place; give it a copy.
    await SwaggerParser.validate(
      structuredClone(doc) as unknown as Parameters<typeof SwaggerParser.validate>[0],
    );
  });

  test("bodiless answers (204, 303) declare no content", async () => {
    const doc = await document();
    const bodiless = operations(doc).flatMap(([name, op]) =>
      Object.entries(op.responses as Record<string, Json>)
        .filter(([status]) => status === "204" || status === "303")
        .map(([status, response]) => ({ name, status, content: response.content })),
    );
    expect(bodiless.length).toBeGreaterThanOrEqual(6);
    for (const answer of bodiless) expect(answer).toEqual({ ...answer, content: undefined });
  });

  test("integers are integers: no anyOf(string, integer) and no number that must be whole", async () => {
    const doc = await document();
    const loose = [...schemas(doc)]
      .filter(
        ([, s]) =>
          (Array.isArray(s.anyOf) &&
            s.anyOf.some((b: Json) => b?.type === "string" && b.format === "integer")) ||
          (s.type === "number" && s.multipleOf === 1),
      )
      .map(([at]) => at);
    expect(loose).toEqual([]);
    const page = doc.paths["/api/v1/products/"].get.responses["200"].content["application/json"].schema;
    for (const field of ["total", "skip", "limit"]) expect(page.properties[field].type).toBe("integer");
  });

  test("a client generated with openapi-typescript types integers as number, never string | number", async () => {
    const doc = await document();
    const types = astToString(await openapiTS(structuredClone(doc) as Parameters<typeof openapiTS>[0]));
    // Every pagination envelope's `total` (products, end users, interactions, recommendations...).
    const totals = [...types.matchAll(/^\s+total: (.+);$/gm)].map((match) => match[1]);
    expect(totals.length).toBeGreaterThanOrEqual(4);
    expect(new Set(totals)).toEqual(new Set(["number"]));
    // The one field that really takes either is the payment provider's event id (webhook).
    const loose = [...types.matchAll(/^\s+(\w+)\??: string \| number;$/gm)].map((match) => match[1]);
    expect(new Set(loose)).toEqual(new Set(["id"]));
  }, 60_000);

  test("category and similar listings: skip and limit are integers with their defaults", async () => {
    const doc = await document();
    for (const path of [
      "/api/v1/recommendations/category/{category}",
      "/api/v1/recommendations/products/external/{external_product_id}/similar",
    ]) {
      const params = Object.fromEntries(
        (doc.paths[path].get.parameters as Json[]).map((p) => [p.name, p.schema]),
      );
      expect({ path, skip: params.skip }).toMatchObject({ path, skip: { type: "integer", default: 0 } });
      expect({ path, limit: params.limit }).toMatchObject({
        path,
        limit: { type: "integer", default: 100, maximum: 1000 },
      });
    }
  });

  test("bodies are JSON only; the train and portal bodies are optional, the others required", async () => {
    const doc = await document();
    const optional = new Set(["POST /api/v1/pipeline/train", "POST /api/v1/billing/create-portal-session"]);
    for (const [name, op] of operations(doc)) {
      if (op.requestBody === undefined) continue;
      expect({ name, media: Object.keys(op.requestBody.content) }).toEqual({
        name,
        media: ["application/json"],
      });
      expect({ name, required: op.requestBody.required }).toEqual({ name, required: !optional.has(name) });
    }
  });

  test("bulk ingestion records are typed as the single-record bodies, value defaulting to 1", async () => {
    const doc = await document();
    const batch = doc.paths["/api/v1/ingestion/batch"].post.requestBody.content["application/json"].schema;
    const single = (path: string) => doc.paths[path].post.requestBody.content["application/json"].schema;
    expect(batch.properties.products.items).toEqual(single("/api/v1/products/"));
    expect(batch.properties.users.items).toEqual(single("/api/v1/end-users/"));
    expect(batch.properties.interactions.items).toEqual(single("/api/v1/interactions/"));
    expect(batch.properties.interactions.items.required).not.toContain("value");
    expect(batch.properties.interactions.items.properties.value.default).toBe(1);
  });

  test("every operation documents each error status with its codes in the errorCode enum", async () => {
    const doc = await document();
    for (const [name, op] of operations(doc)) {
      for (const [status, response] of Object.entries(op.responses as Record<string, Json>)) {
        if (!/^[45]/.test(status) || (["GET /ready", "GET /health"].includes(name) && status === "503"))
          continue;
        const codes = response.content?.["application/json"]?.schema?.properties?.errorCode?.enum;
        expect({ name, status, codes: Array.isArray(codes) && codes.length > 0 }).toEqual({
          name,
          status,
          codes: true,
        });
      }
      expect({ name, has500: "500" in op.responses }).toEqual({ name, has500: true });
    }
  });
});
