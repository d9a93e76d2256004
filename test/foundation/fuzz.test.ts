/**
 * Malformed requests across every route of the OpenAPI document: hostile bodies, path values, query values
 * and headers, as a tenant's key, its token or nobody. None may answer 5xx, and every error is the contract's
 * `{message, errorCode, requestId}`. Seeded, so a failure reproduces.
 */
import { describe, expect, test } from "bun:test";
import { OPENAPI_PATH } from "../../src/app";
import { sharedTestContext } from "../helpers/context";
import { registerTenant } from "../helpers/tenant";

function random(seed: number) {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

const HOSTILE_TEXT = [
  "a\u0000b",
  "\ud800",
  "x".repeat(70_000),
  "1e20",
  "9223372036854775808",
  "-1",
  "0",
  "1.5",
  "NaN",
  "Infinity",
  "0000-01-01T00:00:00Z",
  "-271821-04-20T00:00:00Z",
  "' or 1=1 --",
  "../../etc/passwd",
  "%",
  "",
  " ",
  "null",
  "[]",
  "{}",
];

const HOSTILE_VALUES: unknown[] = [
  null,
  true,
  -1,
  0,
  1e308,
  2 ** 63,
  -(2 ** 31) - 1,
  1.5,
  [],
  {},
  [[[[1]]]],
  { $gt: "" },
  "a\u0000b",
  "\ud800x",
  "x".repeat(30_000),
  "0000-01-01T00:00:00Z",
  "-271821-04-20T00:00:00Z",
  { nested: { deeper: [1, "two", null] } },
];

const RAW_BODIES = [
  `{"a":${"[".repeat(5000)}${"]".repeat(5000)}}`,
  "{not json",
  "[1,2,",
  '{"a":"\\u0000"}',
  '{"a":"\\udc00"}',
  "null",
  "42",
  '"text"',
  "[]",
  "\u0000",
  '{"__proto__":{"polluted":true}}',
];

/** An unpaired surrogate has no UTF-8 form: sent as the CESU-8 bytes a careless client would send. */
function encodePart(text: string): string {
  try {
    return encodeURIComponent(text);
  } catch {
    return "%ED%A0%80";
  }
}

describe("fuzz: malformed requests across all routes", () => {
  test("600 malformed requests answer no 5xx, every error in the contract's shape", async () => {
    const ctx = await sharedTestContext();
    const tenant = await registerTenant(ctx);
    const doc = await ctx.request("GET", OPENAPI_PATH);
    const operations: { method: string; path: string; fields: string[] }[] = [];
    for (const [path, item] of Object.entries(doc.body.paths as Record<string, Record<string, any>>)) {
      for (const [method, operation] of Object.entries(item)) {
        const schema = operation.requestBody?.content?.["application/json"]?.schema;
        const fields = Object.keys(schema?.properties ?? {});
        // Fields of the body, plus the query's: hostile values go in either.
        for (const parameter of operation.parameters ?? []) fields.push(parameter.name);
        operations.push({ method: method.toUpperCase(), path, fields });
      }
    }
    expect(operations.length).toBeGreaterThan(40);

    const next = random(18_19);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!;
    const failures: string[] = [];
    const total = 600;
    for (let i = 0; i < total; i++) {
      const operation = operations[i % operations.length]!;
      const path = operation.path.replace(/\{[^}]+\}/g, () => encodePart(pick(HOSTILE_TEXT)));
      const query = new URLSearchParams();
      for (let q = Math.floor(next() * 3); q > 0; q--) {
        query.set(
          next() < 0.7 && operation.fields.length > 0 ? pick(operation.fields) : `z${q}`,
          pick(HOSTILE_TEXT),
        );
      }
      const headers: Record<string, string> = {};
      const who = next();
      if (who < 0.45) headers["x-api-key"] = tenant.apiKey;
      else if (who < 0.8) headers.authorization = `Bearer ${tenant.token}`;
      else if (who < 0.9) headers["x-api-key"] = pick(["sk_live_", "pk_live_\u00e9", "x".repeat(500)]);
      if (next() < 0.3)
        headers["content-type"] = pick(["text/plain", "application/xml", "application/json; charset=latin1"]);
      let body: string | undefined;
      if (operation.method !== "GET" && operation.method !== "HEAD") {
        if (next() < 0.4) body = pick(RAW_BODIES);
        else {
          const object: Record<string, unknown> = {};
          for (const field of operation.fields) if (next() < 0.7) object[field] = pick(HOSTILE_VALUES);
          object[pick(["extra", "__proto__x", "a\u0000"])] = pick(HOSTILE_VALUES);
          body = JSON.stringify(object);
        }
      }
      // Never a route's happy path: without the hostile parts these would train models or erase accounts.
      const url = `${path}${query.size > 0 ? `?${query}` : ""}`;
      const res = await ctx.request(operation.method, url, {
        headers,
        ...(body === undefined ? {} : { body }),
      });
      const where = `${operation.method} ${url.slice(0, 120)}`;
      if (res.status >= 500) failures.push(`${res.status} ${where}: ${res.text.slice(0, 200)}`);
      else if (res.status >= 400) {
        const shape = res.body as Record<string, unknown> | undefined;
        if (
          typeof shape?.message !== "string" ||
          typeof shape.errorCode !== "string" ||
          shape.requestId !== res.headers.get("x-request-id")
        )
          failures.push(`bad error body ${res.status} ${where}: ${res.text.slice(0, 200)}`);
      }
    }
    expect(failures).toEqual([]);
  }, 240_000);
});
