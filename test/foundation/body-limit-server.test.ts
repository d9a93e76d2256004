/**
 * The 10 MB body limit over a real socket: Bun's own limit used to answer an empty 413 without X-Request-Id
 * and close the connection. Every oversize body, whatever its framing, gets the contract's JSON 413.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { createApp } from "../../src/app";
import { MAX_BODY_BYTES } from "../../src/http/body";
import { sharedTestContext } from "../helpers/context";

describe("bodies over 10 MB on a real server", () => {
  let stop: (() => void) | undefined;
  afterAll(() => stop?.());

  const server = async () => {
    const ctx = await sharedTestContext();
    const app = createApp(ctx.deps).listen({ port: 0, hostname: "127.0.0.1" });
    stop = () => app.stop(true);
    return `http://127.0.0.1:${app.server!.port}`;
  };

  const expectJson413 = async (response: Response) => {
    expect(response.status).toBe(413);
    const body = (await response.json()) as Record<string, unknown>;
    expect(body.errorCode).toBe("PAYLOAD_TOO_LARGE");
    expect(typeof body.message).toBe("string");
    expect(body.requestId).toBe(response.headers.get("x-request-id"));
  };

  test("with Content-Length, well past the limit and just past it", async () => {
    const base = await server();
    for (const size of [MAX_BODY_BYTES + 1, MAX_BODY_BYTES + 1024 * 1024, 40 * 1024 * 1024]) {
      const response = await fetch(`${base}/api/v1/auth/register`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: new Uint8Array(size).fill(0x20),
      });
      await expectJson413(response);
    }
  }, 60_000);

  test("chunked, without Content-Length", async () => {
    const base = await server();
    const piece = new Uint8Array(1024 * 1024).fill(0x20);
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent >= 12 * 1024 * 1024) return controller.close();
        sent += piece.length;
        controller.enqueue(piece);
      },
    });
    const response = await fetch(`${base}/api/v1/products/`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body,
      duplex: "half",
    } as RequestInit);
    await expectJson413(response);
  }, 60_000);

  test("a body just under the limit is read and judged as JSON", async () => {
    const base = await server();
    const response = await fetch(`${base}/api/v1/auth/register`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: `{"pad":"${"x".repeat(MAX_BODY_BYTES - 20)}"}`,
    });
    expect(response.status).toBe(422);
  }, 60_000);
});
