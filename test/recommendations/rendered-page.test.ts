/**
 * A rendered page goes out as its own JSON text, past Elysia's check of every response: its body is checked
 * against the response schema once, when it is rendered, and a body that fails is refused as Elysia refuses
 * one (500, logged by where it failed, never by its values).
 */
import { describe, expect, test } from "bun:test";
import { TypeCompiler } from "@sinclair/typebox/compiler";
import { Elysia } from "elysia";
import { ELYSIA_CONFIG, httpKernel } from "../../src/http/kernel";
import { preRenderedJson, renderPage, respond } from "../../src/modules/recommendations/respond";
import { RecommendationPage } from "../../src/modules/recommendations/schemas";
import { createLogger } from "../../src/shared/logger";

const ITEM = { externalId: "secret-product-id", name: "A product", score: 0.5, source: "popular" as const };

describe("a page is checked against the response schema when it is rendered", () => {
  test("a body within the schema renders, and its JSON text is the body's", () => {
    const page = renderPage("personalized/query", null, { items: [ITEM], total: 1 }, 0, 20);
    expect(page.body).toEqual({ items: [ITEM], total: 1, skip: 0, limit: 20 });
    expect(page.itemIds).toEqual(["secret-product-id"]);
  });

  test("a body outside it (a score that is not a number, a source not in the schema) is refused", () => {
    for (const bad of [
      { ...ITEM, score: Number.NaN },
      { ...ITEM, source: "random" },
    ]) {
      expect(() =>
        renderPage("personalized/query", null, { items: [bad as typeof ITEM], total: 1 }, 0, 20),
      ).toThrow();
    }
  });

  test("a route whose page fails the check answers 500 and logs where, not what", async () => {
    const logs: string[] = [];
    const app = new Elysia(ELYSIA_CONFIG)
      .use(httpKernel(createLogger("debug", (line) => logs.push(line))))
      .get(
        "/bad",
        () => ({
          ...renderPage("x", null, { items: [{ ...ITEM, score: Number.NaN }], total: 1 }, 0, 5).body,
          recommendationId: crypto.randomUUID(),
        }),
        {
          response: { 200: RecommendationPage },
        },
      );
    const res = await app.handle(new Request("http://localhost/bad"));
    const body = (await res.json()) as Record<string, unknown>;
    expect(res.status).toBe(500);
    expect(body.errorCode).toBe("INTERNAL_ERROR");
    const line = logs.map((l) => JSON.parse(l)).find((l) => l.msg === "response failed its schema");
    expect(line).toMatchObject({ requestId: body.requestId, at: ["response.items.0.score"] });
    expect(logs.join("\n")).not.toContain("secret-product-id");
  });

  test("what a sending adds keeps the body within the whole response schema", () => {
    const page = renderPage("personalized/query", 7, { items: [ITEM], total: 1 }, 0, 20);
    const deps = {
      recommendations: { logs: { enqueue: () => {} } },
      usageMeter: { record: () => {} },
    } as unknown as Parameters<typeof respond>[0];
    const plain = respond(deps, 1, page);
    const inExperiment = respond(
      deps,
      1,
      page,
      {
        endpoint: "personalized/query",
        strategy: null,
        modelVariant: null,
        experimentId: 3,
        experimentArm: "B",
      },
      12,
    );
    const whole = TypeCompiler.Compile(RecommendationPage);
    for (const body of [plain, inExperiment]) {
      // What goes out is the JSON text made with the page, with the sending's additions spliced in.
      const sent = JSON.parse(preRenderedJson(body)!);
      expect(sent).toEqual(body);
      expect([...whole.Errors(sent)].map((e) => e.path)).toEqual([]);
    }
    expect(inExperiment.experiment).toEqual({ id: 3, variant: "B", modelVersion: 12 });
  });
});
