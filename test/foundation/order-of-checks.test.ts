/**
 * The contract's order of checks on every route of the OpenAPI document: authentication (401), then
 * permission, scope and origin (403), then the request's values (422, or 404 for an id out of range). Each
 * authenticated operation is called with bad values (a NUL in the query, numeric query values that are not
 * numbers, path ids past 2^31-1, a body that is malformed, too deep or a form) by nobody, by a publishable
 * key it does not admit, and by its own tenant; only the last learns what is wrong with the values.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import { OPENAPI_PATH } from "../../src/app";
import { sharedTestContext, type TestContext } from "../helpers/context";
import { ALLOWED_ORIGIN, createKey, registerTenant, type Tenant } from "../helpers/tenant";

type Json = Record<string, any>;

interface Operation {
  method: string;
  /** The document's path, `{name}` for each parameter. */
  path: string;
  security: Record<string, string[]>[] | undefined;
  scope: string | undefined;
  hasBody: boolean;
  parameters: { in: string; name: string; schema: Json }[];
}

interface BadCase {
  name: string;
  url: string;
  body?: string;
  contentType?: string;
  /** What the operation's own tenant gets: the same answer as before the order of checks was enforced. */
  expected: { status: number; code: string; loc?: (string | number)[][] };
}

const isNumeric = (schema: Json): boolean => schema.type === "integer" || schema.type === "number";
const deepJson = `{"a":${"[".repeat(40)}${"]".repeat(40)}}`;

function pathWith(operation: Operation, integerValue: string): string {
  return operation.path.replace(/\{([^}]+)\}/g, (_, name: string) => {
    const parameter = operation.parameters.find((p) => p.in === "path" && p.name === name);
    return parameter !== undefined && isNumeric(parameter.schema) ? integerValue : "x";
  });
}

/** The bad-value requests an operation can be sent, each with what its own tenant gets back. */
function badCases(operation: Operation): BadCase[] {
  const base = pathWith(operation, "1");
  const cases: BadCase[] = [
    {
      name: "NUL in the query",
      url: `${base}?z=a%00b`,
      expected: { status: 422, code: "VALIDATION_ERROR", loc: [["query"]] },
    },
  ];
  const numericQuery = operation.parameters.filter((p) => p.in === "query" && isNumeric(p.schema));
  if (numericQuery.length > 0) {
    cases.push({
      name: "numeric query values that are not numbers",
      url: `${base}?${numericQuery.map((p) => `${p.name}=abc`).join("&")}`,
      expected: { status: 422, code: "VALIDATION_ERROR", loc: numericQuery.map((p) => ["query", p.name]) },
    });
  }
  if (operation.parameters.some((p) => p.in === "path" && isNumeric(p.schema))) {
    cases.push({
      name: "a path id past 2^31-1",
      url: pathWith(operation, "2147483648"),
      expected: { status: 404, code: "NOT_FOUND" },
    });
  }
  if (operation.hasBody) {
    cases.push(
      {
        name: "a malformed JSON body",
        url: base,
        body: "{not json",
        expected: { status: 422, code: "VALIDATION_ERROR", loc: [["body"]] },
      },
      {
        name: "a body nested past 32 levels",
        url: base,
        body: deepJson,
        expected: { status: 422, code: "VALIDATION_ERROR", loc: [["body"]] },
      },
      {
        name: "a form body",
        url: base,
        body: "a=1",
        contentType: "application/x-www-form-urlencoded",
        expected: { status: 415, code: "UNSUPPORTED_MEDIA_TYPE" },
      },
    );
  }
  // A regular user may not replace the account, whatever the body holds (test/identity/accounts.test.ts).
  if (operation.method === "PUT" && operation.path === "/api/v1/accounts/current") {
    for (const item of cases) item.expected = { status: 403, code: "ADMIN_REQUIRED" };
  }
  return cases;
}

const requiresKey = (operation: Operation): boolean =>
  (operation.security ?? []).some((requirement) => "ApiKey" in requirement);

let ctx: TestContext;
let authenticated: Operation[];
let publicOperations: Operation[];

beforeAll(async () => {
  ctx = await sharedTestContext();
  const doc = (await ctx.request("GET", OPENAPI_PATH)).body as Json;
  const operations: Operation[] = [];
  for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, Json>>)) {
    for (const [method, operation] of Object.entries(item)) {
      operations.push({
        method: method.toUpperCase(),
        path,
        security: operation.security,
        scope: operation["x-publishable-scope"],
        hasBody: operation.requestBody !== undefined,
        parameters: operation.parameters ?? [],
      });
    }
  }
  authenticated = operations.filter((operation) => (operation.security ?? []).length > 0);
  publicOperations = operations.filter((operation) => (operation.security ?? []).length === 0);
});

/**
 * Sends every bad case of every authenticated operation with the headers `credentials` gives (none: the
 * operation is skipped); returns the answers that differ from `expected`.
 */
async function mismatches(
  credentials: (operation: Operation) => Promise<Record<string, string> | undefined>,
  expected: (operation: Operation, item: BadCase) => BadCase["expected"],
): Promise<string[]> {
  const found: string[] = [];
  for (const operation of authenticated) {
    for (const item of badCases(operation)) {
      const headers = await credentials(operation);
      if (headers === undefined) continue;
      const res = await ctx.request(operation.method, item.url, {
        headers: { ...headers, ...(item.contentType ? { "content-type": item.contentType } : {}) },
        ...(item.body === undefined ? {} : { body: item.body }),
      });
      const want = expected(operation, item);
      const got = {
        status: res.status,
        code: res.body?.errorCode,
        ...(want.loc === undefined ? {} : { loc: (res.body?.detail ?? []).map((d: Json) => d.loc) }),
      };
      if (JSON.stringify(got) !== JSON.stringify(want)) {
        found.push(`${operation.method} ${operation.path}, ${item.name}: ${JSON.stringify(got)}`);
      }
    }
  }
  return found;
}

describe("the order of checks on every authenticated route", () => {
  test("the document lists the authenticated routes this file walks", () => {
    expect(authenticated.length).toBeGreaterThan(50);
    expect(authenticated.filter((operation) => operation.hasBody).length).toBeGreaterThan(15);
  });

  test("no credentials and bad values: 401 on every route, never 404, 415 or 422", async () => {
    const found = await mismatches(
      async () => ({}),
      (operation) => ({
        status: 401,
        code: requiresKey(operation) ? "INVALID_API_KEY" : "INVALID_TOKEN",
      }),
    );
    expect(found).toEqual([]);
  });

  test("a publishable key lacking the route's scope, and bad values: 403 INSUFFICIENT_SCOPE", async () => {
    const owner = await registerTenant(ctx);
    const readOnly = await createKey(ctx, owner.token, {
      kind: "publishable",
      scopes: ["recommendations:read"],
    });
    const writeOnly = await createKey(ctx, owner.token, {
      kind: "publishable",
      scopes: ["interactions:write"],
    });
    const found = await mismatches(
      async (operation) => ({
        "x-api-key": operation.scope === "recommendations:read" ? writeOnly.apiKey : readOnly.apiKey,
        origin: ALLOWED_ORIGIN,
      }),
      // A JWT-only route reads no API key: it still wants its token first.
      (operation) =>
        requiresKey(operation)
          ? { status: 403, code: "INSUFFICIENT_SCOPE" }
          : { status: 401, code: "INVALID_TOKEN" },
    );
    expect(found).toEqual([]);
  });

  test("a publishable key with the scope, from an origin it does not allow, and bad values: 403 ORIGIN_NOT_ALLOWED", async () => {
    const owner = await registerTenant(ctx);
    const { apiKey } = await createKey(ctx, owner.token, { kind: "publishable" });
    const scoped = authenticated.filter((operation) => operation.scope !== undefined);
    expect(scoped.length).toBeGreaterThan(5);
    const found = await mismatches(
      async (operation) =>
        operation.scope === undefined
          ? undefined
          : { "x-api-key": apiKey, origin: "https://evil.example.net" },
      () => ({ status: 403, code: "ORIGIN_NOT_ALLOWED" }),
    );
    expect(found).toEqual([]);
  });

  test("the route's own tenant and bad values: the 422, 415 or 404 naming what is wrong", async () => {
    // A fresh tenant every 40 requests keeps each under the FREE plan's 60 requests a minute.
    let tenant: Tenant = await registerTenant(ctx);
    let sent = 0;
    const found = await mismatches(
      async () => {
        if (++sent % 40 === 0) tenant = await registerTenant(ctx);
        return { "x-api-key": tenant.apiKey, authorization: `Bearer ${tenant.token}` };
      },
      (_, item) => item.expected,
    );
    expect(sent).toBeGreaterThan(100);
    expect(found).toEqual([]);
  });
});

describe("the order of checks, case by case", () => {
  test("GET /products/?limit=0 and GET /pipeline/jobs/0/status answer 401 without credentials, 422 and 404 with them", async () => {
    const tenant = await registerTenant(ctx);
    const list = "/api/v1/products/?limit=0";
    const job = "/api/v1/pipeline/jobs/0/status";
    for (const path of [list, job]) {
      const anonymous = await ctx.request("GET", path);
      expect([anonymous.status, anonymous.body.errorCode]).toEqual([401, "INVALID_API_KEY"]);
    }
    const limit = await ctx.request("GET", list, { apiKey: tenant.apiKey });
    expect([limit.status, limit.body.detail]).toEqual([
      422,
      [{ loc: ["query", "limit"], msg: "must be an integer from 1 to 1000", type: "value_error.range" }],
    ]);
    const missing = await ctx.request("GET", job, { apiKey: tenant.apiKey });
    expect([missing.status, missing.body.errorCode]).toEqual([404, "NOT_FOUND"]);
  });

  test("public routes check a request's values at once: a NUL in the query is 422 with no credentials", async () => {
    const found: string[] = [];
    const walked = publicOperations.filter((operation) => operation.path !== "/metrics");
    expect(walked.length).toBeGreaterThan(8);
    for (const operation of walked) {
      const res = await ctx.request(operation.method, `${pathWith(operation, "1")}?z=a%00b`);
      if (res.status !== 422 || res.body.errorCode !== "VALIDATION_ERROR") {
        found.push(`${operation.method} ${operation.path}: ${res.status} ${res.body?.errorCode}`);
      }
    }
    expect(found).toEqual([]);
  });

  test("GET /metrics authorises the scraper before it looks at the request's values", async () => {
    const url = "/metrics?z=a%00b";
    const forwarded = await ctx.request("GET", url, { headers: { "x-forwarded-for": "203.0.113.9" } });
    expect([forwarded.status, forwarded.body.errorCode]).toEqual([403, "FORBIDDEN"]);
    const local = await ctx.request("GET", url);
    expect([local.status, local.body.errorCode]).toEqual([422, "VALIDATION_ERROR"]);
  });

  test("a route that reads no body ignores a malformed or form body, as it ignores a well-formed one", async () => {
    const tenant = await registerTenant(ctx);
    const stop = "/api/v1/experiments/2147483647/stop";
    for (const [body, contentType] of [
      ["{not json", "application/json"],
      ["a=1", "application/x-www-form-urlencoded"],
      ['{"any":"thing"}', "application/json"],
    ] as const) {
      const res = await ctx.request("POST", stop, {
        apiKey: tenant.apiKey,
        body,
        headers: { "content-type": contentType },
      });
      expect([res.status, res.body.errorCode]).toEqual([404, "NOT_FOUND"]);
    }
  });
});
