import { describe, expect, test } from "bun:test";
import { Elysia } from "elysia";
import { ELYSIA_CONFIG, httpKernel } from "../../src/http/kernel";
import { createLogger } from "../../src/shared/logger";

describe("the kernel's request hook", () => {
  test("runs as each request starts, before its route and for requests no route takes", async () => {
    const calls: string[] = [];
    const app = new Elysia(ELYSIA_CONFIG)
      .use(
        httpKernel(
          createLogger("error", () => {}),
          undefined,
          { onRequest: () => calls.push("hook") },
        ),
      )
      .get("/here", () => {
        calls.push("route");
        return "ok";
      });
    expect((await app.handle(new Request("http://local/here"))).status).toBe(200);
    expect((await app.handle(new Request("http://local/nowhere"))).status).toBe(404);
    expect(calls).toEqual(["hook", "route", "hook"]);
  });
});
