/**
 * Hostile and malformed input: every case answers a 4xx in the error shape, before anything else touches the
 * value (issues 18 and 19, contract "Errors"). Runs on PGlite and Postgres.
 */
import { describe, expect, test } from "bun:test";
import { MAX_BODY_BYTES } from "../../src/http/body";
import { sharedTestContext, type TestContext, type TestResponse } from "../helpers/context";
import { ALLOWED_ORIGIN, createKey, registerTenant, type Tenant } from "../helpers/tenant";

const API = "/api/v1";
const deepArrays = (levels: number) => `{"a":${"[".repeat(levels)}${"]".repeat(levels)}}`;

function expectError(res: TestResponse<any>, status: number, errorCode: string): void {
  expect(res.status).toBe(status);
  expect(res.body.errorCode).toBe(errorCode);
  expect(typeof res.body.message).toBe("string");
  expect(res.body.requestId).toBe(res.headers.get("x-request-id"));
}

const product = (externalId: string, extra: Record<string, unknown> = {}) => ({
  externalId,
  name: "Lamp",
  price: 10,
  category: "home/lighting",
  ...extra,
});

/**
 * A tenant of its own for each test: requests with bad values count against the plan's per-minute limit like
 * any other, since the plan is checked before the values (contract, "Order of checks").
 */
const setup = async (): Promise<{ ctx: TestContext; tenant: Tenant }> => {
  const ctx = await sharedTestContext();
  return { ctx, tenant: await registerTenant(ctx) };
};

describe("deep JSON before authentication", () => {
  for (const path of [`${API}/auth/register`, `${API}/auth/token`, `${API}/billing/webhook/local`]) {
    test(`${path}: 50,000 nested arrays answer 422 naming the depth, not a 500`, async () => {
      const { ctx } = await setup();
      const res = await ctx.request("POST", path, { body: deepArrays(50_000) });
      expectError(res, 422, "VALIDATION_ERROR");
      expect(res.body.detail[0]).toMatchObject({ loc: ["body"], msg: expect.stringContaining("32") });
    });
  }

  test("32 levels are accepted as JSON (the limit is inclusive)", async () => {
    const { ctx, tenant } = await setup();
    const nested = JSON.parse(`${"[".repeat(30)}1${"]".repeat(30)}`);
    const res = await ctx.request("POST", `${API}/products/`, {
      apiKey: tenant.apiKey,
      body: product(`deep-ok-${Date.now()}`, { attributes: { n: nested } }),
    });
    expect(res.status).toBe(201);
    const tooDeep = JSON.parse(`${"[".repeat(31)}1${"]".repeat(31)}`);
    const refused = await ctx.request("POST", `${API}/products/`, {
      apiKey: tenant.apiKey,
      body: product(`deep-no-${Date.now()}`, { attributes: { n: tooDeep } }),
    });
    expectError(refused, 422, "VALIDATION_ERROR");
  });
});

describe("NUL and unpaired surrogates", () => {
  test("NUL in a body string answers 422 naming the field (register, webhook, product)", async () => {
    const { ctx, tenant } = await setup();
    const register = await ctx.request("POST", `${API}/auth/register`, {
      body: '{"accountName":"a\\u0000b","email":"nul@example.com","password":"long enough pw"}',
    });
    expectError(register, 422, "VALIDATION_ERROR");
    expect(register.body.detail[0].loc).toEqual(["body", "accountName"]);
    const webhook = await ctx.request("POST", `${API}/billing/webhook/local`, {
      body: '{"id":"e\\u0000","type":"subscription_preapproval","data":{"id":"x"}}',
    });
    expectError(webhook, 422, "VALIDATION_ERROR");
    const created = await ctx.request("POST", `${API}/products/`, {
      apiKey: tenant.apiKey,
      body: JSON.stringify(product("nul\u0000id")),
    });
    expectError(created, 422, "VALIDATION_ERROR");
    expect(created.body.detail[0].loc).toEqual(["body", "externalId"]);
  });

  test("a lone surrogate in an attribute answers 422", async () => {
    const { ctx, tenant } = await setup();
    const res = await ctx.request("POST", `${API}/products/`, {
      apiKey: tenant.apiKey,
      body: `{"externalId":"sur-${Date.now()}","name":"x","price":1,"category":"c","attributes":{"k":"\\ud800"}}`,
    });
    expectError(res, 422, "VALIDATION_ERROR");
    expect(res.body.detail[0].loc).toEqual(["body", "attributes", "k"]);
  });

  test("NUL in the path or the query answers 422", async () => {
    const { ctx, tenant } = await setup();
    const path = await ctx.request("GET", `${API}/products/external/a%00b`, { apiKey: tenant.apiKey });
    expectError(path, 422, "VALIDATION_ERROR");
    const query = await ctx.request("GET", `${API}/products/?category=a%00b`, { apiKey: tenant.apiKey });
    expectError(query, 422, "VALIDATION_ERROR");
    expect(query.body.detail[0].loc).toEqual(["query"]);
  });
});

describe("integers out of range", () => {
  for (const list of ["products/", "end-users/", "interactions/"]) {
    for (const skip of ["1e20", "9223372036854775808", "2147483648", "-1"]) {
      test(`${list}?skip=${skip} answers 422 at ["query","skip"]`, async () => {
        const { ctx, tenant } = await setup();
        const res = await ctx.request("GET", `${API}/${list}`, { apiKey: tenant.apiKey, query: { skip } });
        expectError(res, 422, "VALIDATION_ERROR");
        expect(res.body.detail).toEqual([
          {
            loc: ["query", "skip"],
            msg: "must be an integer from 0 to 2147483647",
            type: expect.any(String),
          },
        ]);
      });
    }
  }

  test("models?offset=1e20 answers 422; job ids past 2^31-1 answer 404", async () => {
    const { ctx, tenant } = await setup();
    const models = await ctx.request("GET", `${API}/pipeline/models`, {
      apiKey: tenant.apiKey,
      query: { offset: "1e20" },
    });
    expectError(models, 422, "VALIDATION_ERROR");
    expect(models.body.detail[0].loc).toEqual(["query", "offset"]);
    for (const id of ["2147483648", "9223372036854775808", "99999999999999999999"]) {
      const training = await ctx.request("GET", `${API}/pipeline/jobs/${id}/status`, {
        apiKey: tenant.apiKey,
      });
      expectError(training, 404, "NOT_FOUND");
      const batch = await ctx.request("GET", `${API}/ingestion/batch/${id}`, { apiKey: tenant.apiKey });
      expectError(batch, 404, "NOT_FOUND");
    }
  });

  test("timestamps in year 0000 or -271821, or before 1970, answer 422 at the timestamp", async () => {
    const { ctx, tenant } = await setup();
    await ctx.request("POST", `${API}/products/`, { apiKey: tenant.apiKey, body: product("ts-p") });
    for (const timestamp of ["0000-01-01T00:00:00Z", "-271821-04-20T00:00:00Z", "1969-12-31T23:59:59Z"]) {
      const res = await ctx.request("POST", `${API}/interactions/`, {
        apiKey: tenant.apiKey,
        body: { external_user_id: "u", external_product_id: "ts-p", interaction_type: "VIEW", timestamp },
      });
      expect(res.status).toBe(422);
      expect(res.body.errorCode).toBe("VALIDATION_ERROR");
      expect(res.body.detail[0].loc).toEqual(["body", "timestamp"]);
    }
  });
});

describe("field limits of the contract", () => {
  test("externalId 255, name 500, description 20,000: at the limit accepted, past it 422 naming the field", async () => {
    const { ctx, tenant } = await setup();
    const stamp = Date.now().toString(36);
    const atLimit = await ctx.request("POST", `${API}/products/`, {
      apiKey: tenant.apiKey,
      body: product(`${stamp}${"x".repeat(255 - stamp.length)}`, {
        name: "n".repeat(500),
        brand: "b".repeat(500),
        description: "d".repeat(20_000),
        category: "c".repeat(255),
      }),
    });
    expect(atLimit.status).toBe(201);
    for (const [field, value] of [
      ["externalId", "x".repeat(256)],
      ["name", "n".repeat(501)],
      ["brand", "b".repeat(501)],
      ["description", "d".repeat(20_001)],
      ["category", "c".repeat(256)],
    ] as const) {
      const res = await ctx.request("POST", `${API}/products/`, {
        apiKey: tenant.apiKey,
        body: { ...product(`lim-${field}`), [field]: value },
      });
      expectError(res, 422, "VALIDATION_ERROR");
      expect(res.body.detail).toEqual([
        { loc: ["body", field], msg: expect.stringMatching(/at most/), type: expect.any(String) },
      ]);
    }
  });

  test("attributes: at most 100 keys and 16 KB as JSON, for products and end users", async () => {
    const { ctx, tenant } = await setup();
    const manyKeys = Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`k${i}`, i]));
    const huge = { blob: "x".repeat(16 * 1024) };
    const fits = { blob: "x".repeat(15 * 1024) };
    for (const attributes of [manyKeys, huge]) {
      const p = await ctx.request("POST", `${API}/products/`, {
        apiKey: tenant.apiKey,
        body: product(`attr-${Math.random()}`, { attributes }),
      });
      expectError(p, 422, "VALIDATION_ERROR");
      expect(p.body.detail[0].loc).toEqual(["body", "attributes"]);
      expect(p.body.detail[0].msg).toContain("16 KB");
      const u = await ctx.request("POST", `${API}/end-users/`, {
        apiKey: tenant.apiKey,
        body: { externalId: `attr-${Math.random()}`, attributes },
      });
      expectError(u, 422, "VALIDATION_ERROR");
    }
    const ok = await ctx.request("POST", `${API}/products/`, {
      apiKey: tenant.apiKey,
      body: product(`attr-fits-${Date.now()}`, { attributes: fits }),
    });
    expect(ok.status).toBe(201);
  });

  test("a bulk record with oversized attributes is a record error, the others are stored", async () => {
    const { ctx, tenant } = await setup();
    const res = await ctx.request("POST", `${API}/ingestion/batch`, {
      apiKey: tenant.apiKey,
      body: {
        products: [
          product("bulk-big", { attributes: { blob: "x".repeat(17 * 1024) } }),
          product("bulk-fine"),
        ],
      },
    });
    expect(res.status).toBe(202);
    let job = res;
    for (let i = 0; i < 100; i++) {
      job = await ctx.request("GET", `${API}/ingestion/batch/${res.body.jobId}`, { apiKey: tenant.apiKey });
      if (job.body.status !== "processing") break;
      await Bun.sleep(50);
    }
    expect(job.body.status).toBe("completed_with_errors");
    expect(job.body.errors.map((e: { externalId: string }) => e.externalId)).toEqual(["bulk-big"]);
    // In words, as the route's own 422 says it.
    expect(job.body.errors[0].errorMessage).toBe(
      "attributes: must be an object of at most 100 keys and 16 KB as JSON",
    );
  });

  test("a search query over 1,000 characters and an in list over 1,000 values answer 422", async () => {
    const { ctx, tenant } = await setup();
    const search = await ctx.request("POST", `${API}/interactions/`, {
      apiKey: tenant.apiKey,
      body: {
        external_user_id: "u",
        external_product_id: "p",
        interaction_type: "SEARCH",
        query: "q".repeat(1001),
      },
    });
    expectError(search, 422, "VALIDATION_ERROR");
    expect(search.body.detail[0].loc).toEqual(["body", "query"]);
    const values = Array.from({ length: 1001 }, (_, i) => `b${i}`);
    const list = await ctx.request("POST", `${API}/recommendations/personalized/query`, {
      apiKey: tenant.apiKey,
      body: { external_user_id: "u", filters: { filters: [{ field: "brand", op: "in", value: values }] } },
    });
    expectError(list, 422, "VALIDATION_ERROR");
    expect(list.body.detail[0].loc).toEqual(["body", "filters", "filters", 0, "value"]);
    const conditions = Array.from({ length: 51 }, () => ({ field: "price", op: "gt", value: 1 }));
    const many = await ctx.request("POST", `${API}/recommendations/personalized/query`, {
      apiKey: tenant.apiKey,
      body: { external_user_id: "u", filters: { filters: conditions } },
    });
    expectError(many, 422, "VALIDATION_ERROR");
    expect(many.body.detail[0].loc).toEqual(["body", "filters", "filters"]);
  });
});

describe("bodies: size, framing and media type", () => {
  test("a chunked body past 10 MB answers the JSON 413 with X-Request-Id", async () => {
    const { ctx } = await setup();
    const piece = new Uint8Array(1024 * 1024).fill(0x20);
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent > MAX_BODY_BYTES + piece.length) return controller.close();
        sent += piece.length;
        controller.enqueue(piece);
      },
    });
    const response = await ctx.app.handle(
      new Request(`http://localhost${API}/auth/register`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: stream,
      }),
    );
    expect(response.status).toBe(413);
    const body = (await response.json()) as Record<string, unknown>;
    expect(body.errorCode).toBe("PAYLOAD_TOO_LARGE");
    expect(body.requestId).toBe(response.headers.get("x-request-id"));
  });

  test("a JSON body without Content-Type is read as JSON", async () => {
    const { ctx, tenant } = await setup();
    const response = await ctx.app.handle(
      new Request(`http://localhost${API}/products/`, {
        method: "POST",
        headers: { "x-api-key": tenant.apiKey },
        body: JSON.stringify(product(`no-type-${Date.now()}`)),
      }),
    );
    expect(response.status).toBe(201);
    const asForm = await ctx.request("POST", `${API}/products/`, {
      apiKey: tenant.apiKey,
      body: JSON.stringify(product(`form-type-${Date.now()}`)),
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
    expectError(asForm, 415, "UNSUPPORTED_MEDIA_TYPE");
  });

  test("form and multipart bodies answer 415", async () => {
    const { ctx, tenant } = await setup();
    const form = new FormData();
    form.set("externalId", "x");
    const response = await ctx.app.handle(
      new Request(`http://localhost${API}/products/`, {
        method: "POST",
        headers: { "x-api-key": tenant.apiKey },
        body: form,
      }),
    );
    expect(response.status).toBe(415);
    expect(((await response.json()) as { errorCode: string }).errorCode).toBe("UNSUPPORTED_MEDIA_TYPE");
    const urlencoded = await ctx.request("POST", `${API}/auth/register`, {
      body: "email=a%40b.c&password=12345678",
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
    expectError(urlencoded, 415, "UNSUPPORTED_MEDIA_TYPE");
  });

  test("a compressed body answers 415 saying so, not a JSON error, and nothing is stored", async () => {
    const { ctx, tenant } = await setup();
    const externalId = `gzip-${Date.now()}`;
    const response = await ctx.app.handle(
      new Request(`http://localhost${API}/products/`, {
        method: "POST",
        headers: {
          "x-api-key": tenant.apiKey,
          "content-type": "application/json",
          "content-encoding": "gzip",
        },
        body: Bun.gzipSync(JSON.stringify(product(externalId))),
      }),
    );
    expect(response.status).toBe(415);
    const body = (await response.json()) as { errorCode: string; message: string };
    expect(body.errorCode).toBe("UNSUPPORTED_MEDIA_TYPE");
    expect(body.message).toContain("Content-Encoding");
    const stored = await ctx.request("GET", `${API}/products/external/${externalId}`, {
      apiKey: tenant.apiKey,
    });
    expect(stored.status).toBe(404);
  });

  test("the OpenAPI document advertises JSON bodies only", async () => {
    const { ctx } = await setup();
    const doc = await ctx.request("GET", `${API}/public-openapi.json`);
    const types = new Set<string>();
    for (const item of Object.values(doc.body.paths) as Record<
      string,
      { requestBody?: { content?: object } }
    >[]) {
      for (const operation of Object.values(item)) {
        for (const type of Object.keys(operation.requestBody?.content ?? {})) types.add(type);
      }
    }
    expect([...types]).toEqual(["application/json"]);
  });
});

describe("query parameters and methods", () => {
  test("unknown query parameters (cache busters, utm_*) are ignored on every list", async () => {
    const { ctx, tenant } = await setup();
    for (const path of [
      "products/",
      "end-users/",
      "interactions/",
      "pipeline/models",
      "pipeline/jobs",
      "ingestion/batch",
    ]) {
      const res = await ctx.request("GET", `${API}/${path}`, {
        apiKey: tenant.apiKey,
        query: { utm_source: "newsletter", _: "1732000000" },
      });
      expect(res.status).toBe(200);
    }
  });

  test("a known path with a wrong method answers 405 with Allow", async () => {
    const { ctx, tenant } = await setup();
    const res = await ctx.request("DELETE", `${API}/products/`, { apiKey: tenant.apiKey });
    expectError(res, 405, "METHOD_NOT_ALLOWED");
    expect(res.headers.get("allow")).toBe("GET, POST");
    const job = await ctx.request("POST", `${API}/pipeline/jobs/1/status`, { apiKey: tenant.apiKey });
    expectError(job, 405, "METHOD_NOT_ALLOWED");
    expect(job.headers.get("allow")).toBe("GET");
    const unknown = await ctx.request("DELETE", `${API}/no-such-thing`);
    expectError(unknown, 404, "NOT_FOUND");
  });
});

describe("422 details a person can act on", () => {
  test("range errors on query and path parameters name the parameter", async () => {
    const { ctx, tenant } = await setup();
    for (const [path, loc] of [
      ["products/?limit=0", ["query", "limit"]],
      ["products/?limit=1001", ["query", "limit"]],
      ["end-users/?skip=-1", ["query", "skip"]],
      ["recommendations/category/books?limit=0", ["query", "limit"]],
      ["recommendations/products/external/p1/similar?skip=-1", ["query", "skip"]],
      ["pipeline/jobs/1.5/status", ["path", "job_id"]],
    ] as const) {
      const res = await ctx.request("GET", `${API}/${path}`, { apiKey: tenant.apiKey });
      expectError(res, 422, "VALIDATION_ERROR");
      expect(res.body.detail.map((d: { loc: unknown }) => d.loc)).toEqual([loc]);
    }
    const checkout = await ctx.request("POST", `${API}/recommendations/ecommerce/checkout?order_value=-5`, {
      apiKey: tenant.apiKey,
      body: { external_user_id: "u" },
    });
    expectError(checkout, 422, "VALIDATION_ERROR");
    expect(checkout.body.detail.map((d: { loc: unknown }) => d.loc)).toEqual([["query", "order_value"]]);
    const key = await ctx.request("DELETE", `${API}/api-keys/1.5`, { token: tenant.token });
    expectError(key, 422, "VALIDATION_ERROR");
    expect(key.body.detail[0].loc).toEqual(["path", "api_key_id"]);
  });

  test("each missing field appears once", async () => {
    const { ctx, tenant } = await setup();
    const res = await ctx.request("POST", `${API}/products/`, { apiKey: tenant.apiKey, body: {} });
    expectError(res, 422, "VALIDATION_ERROR");
    const locs = res.body.detail.map((d: { loc: string[] }) => d.loc.join("."));
    expect(locs.sort()).toEqual(["body.category", "body.externalId", "body.name", "body.price"]);
  });

  test("enum errors list the allowed values; pattern errors say what is expected, not a regex", async () => {
    const { ctx, tenant } = await setup();
    const strategy = await ctx.request("POST", `${API}/recommendations/personalized/query`, {
      apiKey: tenant.apiKey,
      body: { external_user_id: "u", strategy: "collaborative" },
    });
    expectError(strategy, 422, "VALIDATION_ERROR");
    expect(strategy.body.detail).toEqual([
      {
        loc: ["body", "strategy"],
        msg: "must be one of: hybrid, content_based, collab, popularity",
        type: expect.any(String),
      },
    ]);
    const type = await ctx.request("POST", `${API}/interactions/`, {
      apiKey: tenant.apiKey,
      body: { external_user_id: "u", external_product_id: "p", interaction_type: "nope" },
    });
    expect(type.body.detail[0].loc).toEqual(["body", "interaction_type"]);
    expect(type.body.detail[0].msg).toContain("VIEW, CLICK");
    const field = await ctx.request("POST", `${API}/recommendations/personalized/query`, {
      apiKey: tenant.apiKey,
      body: { external_user_id: "u", filters: { filters: [{ field: "colour", op: "eq", value: "red" }] } },
    });
    expect(field.body.detail[0].loc).toEqual(["body", "filters", "filters", 0, "field"]);
    expect(field.body.detail[0].msg).toContain("attributes.<key>");
    const domains = await ctx.request("POST", `${API}/api-keys/`, {
      token: tenant.token,
      body: { name: "web", kind: "publishable", allowedDomains: ["https://shop.com/"] },
    });
    expect(domains.body.detail[0].loc).toEqual(["body", "allowedDomains", 0]);
    expect(domains.body.detail[0].msg).toContain("host name");
    for (const res of [strategy, type, field, domains]) {
      for (const d of res.body.detail) expect(d.msg).not.toMatch(/[\^$\\]|\[[A-Za-z]/);
    }
  });
});

describe("smaller error messages", () => {
  test("INSUFFICIENT_SCOPE names the missing scope, or says a secret key is needed", async () => {
    const { ctx, tenant } = await setup();
    const { apiKey } = await createKey(ctx, tenant.token, {
      kind: "publishable",
      scopes: ["recommendations:read"],
    });
    const headers = { origin: ALLOWED_ORIGIN };
    const interaction = await ctx.request("POST", `${API}/interactions/`, {
      apiKey,
      headers,
      body: { external_user_id: "u", external_product_id: "p", interaction_type: "VIEW" },
    });
    expectError(interaction, 403, "INSUFFICIENT_SCOPE");
    expect(interaction.body.message).toContain("interactions:write");
    const products = await ctx.request("GET", `${API}/products/`, { apiKey, headers });
    expectError(products, 403, "INSUFFICIENT_SCOPE");
    expect(products.body.message).toContain("secret key");
  });

  test("bulk record errors carry the record's index, telling two bad u1:p2 records apart", async () => {
    const { ctx, tenant } = await setup();
    const res = await ctx.request("POST", `${API}/ingestion/batch`, {
      apiKey: tenant.apiKey,
      body: {
        products: [product("idx-ok"), { externalId: "idx-bad" }],
        interactions: [
          { external_user_id: "u1", external_product_id: "idx-ok", interaction_type: "VIEW", value: 1 },
          { external_user_id: "u1", external_product_id: "p2", interaction_type: "VIEW", value: 1 },
          { external_user_id: "u1", external_product_id: "p2", interaction_type: "NOPE", value: 1 },
        ],
      },
    });
    expect(res.status).toBe(202);
    let job = res;
    for (let i = 0; i < 100; i++) {
      job = await ctx.request("GET", `${API}/ingestion/batch/${res.body.jobId}`, { apiKey: tenant.apiKey });
      if (job.body.status !== "processing") break;
      await Bun.sleep(50);
    }
    const errors = job.body.errors as { recordType: string; externalId: string; index: number }[];
    expect(errors.map((e) => [e.recordType, e.externalId, e.index]).sort()).toEqual([
      ["interaction", "u1:p2", 1],
      ["interaction", "u1:p2", 2],
      ["product", "idx-bad", 1],
    ]);
  });
});
