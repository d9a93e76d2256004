import { describe, expect, test } from "bun:test";
import { Elysia, t } from "elysia";
import { ELYSIA_CONFIG, httpKernel, MAX_BODY_BYTES } from "../../src/http/kernel";
import { AppError } from "../../src/shared/errors";
import { createLogger } from "../../src/shared/logger";
import { sharedTestContext } from "../helpers/context";

// A small app on the real kernel exercises each error path with routes made for the purpose.
function kernelApp(logs: string[]) {
  return new Elysia(ELYSIA_CONFIG)
    .use(httpKernel(createLogger("debug", (line) => logs.push(line))))
    .post("/echo", ({ body }) => body, {
      body: t.Object(
        { name: t.String({ maxLength: 5 }), price: t.Number({ exclusiveMinimum: 0 }) },
        { additionalProperties: false },
      ),
    })
    .get("/conflict", () => {
      throw new AppError("CONFLICT", "Already exists");
    })
    .get("/limited", () => {
      throw new AppError("RATE_LIMITED", "Slow down", { headers: { "retry-after": "7" } });
    })
    .get("/leaky", () => ({ name: "ok", passwordHash: "x" }), { response: t.Object({ name: t.String() }) })
    .get("/boom", () => {
      throw new Error("secret internal detail");
    });
}

const call = async (app: ReturnType<typeof kernelApp>, path: string, init?: RequestInit) => {
  const res = await app.handle(new Request(`http://localhost${path}`, init));
  return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, any> };
};

describe("error mapping", () => {
  test("unknown routes answer 404 NOT_FOUND in the error shape", async () => {
    const ctx = await sharedTestContext();
    const res = await ctx.request("GET", "/api/v1/nothing-here");
    expect(res.status).toBe(404);
    expect(res.body).toEqual({
      message: expect.any(String),
      errorCode: "NOT_FOUND",
      requestId: res.headers.get("x-request-id"),
    });
  });

  test("a domain error maps to its status with {message, errorCode, requestId}", async () => {
    const res = await call(kernelApp([]), "/conflict");
    expect(res.status).toBe(409);
    expect(res.body).toEqual({
      message: "Already exists",
      errorCode: "CONFLICT",
      requestId: res.headers.get("x-request-id"),
    });
  });

  test("error headers such as Retry-After reach the response", async () => {
    const res = await call(kernelApp([]), "/limited");
    expect(res.status).toBe(429);
    expect(res.headers.get("retry-after")).toBe("7");
  });

  test("schema violations answer 422 VALIDATION_ERROR with one detail entry per invalid field", async () => {
    const res = await call(kernelApp([]), "/echo", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name: "too long name", price: 0 }),
    });
    expect(res.status).toBe(422);
    expect(res.body.errorCode).toBe("VALIDATION_ERROR");
    const locs = (res.body.detail as { loc: string[] }[]).map((d) => d.loc.join("."));
    expect(locs).toContain("body.name");
    expect(locs).toContain("body.price");
    for (const d of res.body.detail) expect(typeof d.msg).toBe("string");
    // `type` names the failed check in words a client can test for, never TypeBox's number for it.
    const types = Object.fromEntries(
      (res.body.detail as { loc: string[]; type: string }[]).map((d) => [d.loc.join("."), d.type]),
    );
    expect(types["body.name"]).toBe("value_error.string_max_length");
    expect(types["body.price"]).toBe("value_error.number_exclusive_minimum");
  });

  test("unknown body fields are rejected with 422", async () => {
    const res = await call(kernelApp([]), "/echo", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name: "ok", price: 1, internal_target_score: 3 }),
    });
    expect(res.status).toBe(422);
    expect(res.body.detail).toEqual([
      {
        loc: ["body", "internal_target_score"],
        msg: "is not an accepted field",
        type: "value_error.object_additional_properties",
      },
    ]);
  });

  test("malformed JSON answers 422, not 500", async () => {
    const res = await call(kernelApp([]), "/echo", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{not json",
    });
    expect(res.status).toBe(422);
    expect(res.body.errorCode).toBe("VALIDATION_ERROR");
  });

  test("unexpected errors answer 500 INTERNAL_ERROR without details, and are logged with the requestId", async () => {
    const logs: string[] = [];
    const res = await call(kernelApp(logs), "/boom");
    expect(res.status).toBe(500);
    expect(res.body.errorCode).toBe("INTERNAL_ERROR");
    expect(JSON.stringify(res.body)).not.toContain("secret internal detail");
    expect(JSON.stringify(res.body)).not.toContain("at ");
    const logged = logs.map((l) => JSON.parse(l)).find((l) => l.level === "error");
    expect(logged.requestId).toBe(res.body.requestId);
  });

  test("a response that breaks its own schema is a 500, never leaked fields or a 422", async () => {
    const res = await call(kernelApp([]), "/leaky");
    expect(res.status).toBe(500);
    expect(JSON.stringify(res.body)).not.toContain("passwordHash");
  });

  test("bodies over 10 MB answer 413 PAYLOAD_TOO_LARGE", async () => {
    const ctx = await sharedTestContext();
    const res = await ctx.request("POST", "/api/v1/anything", {
      body: "x".repeat(MAX_BODY_BYTES + 10),
      headers: { "content-type": "application/json", "content-length": String(MAX_BODY_BYTES + 10) },
    });
    expect(res.status).toBe(413);
    expect(res.body.errorCode).toBe("PAYLOAD_TOO_LARGE");
  });
});
