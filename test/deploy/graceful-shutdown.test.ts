import { afterAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { connect } from "node:net";
import { makeTempDir } from "../helpers/temp-dirs";
import { childEnv, type ServerProcess, startServer, TEST_JWT_SECRET } from "./support/server-process";

const dataDir = makeTempDir("rs-shutdown-");
let server: ServerProcess | undefined;

afterAll(async () => {
  await server?.stop("SIGKILL");
  rmSync(dataDir, { recursive: true, force: true });
});

/** Opens a raw connection and sends the request line, headers and the first part of the body. */
function startSlowRequest(baseUrl: string, path: string, body: string) {
  const url = new URL(baseUrl);
  const socket = connect({ host: url.hostname, port: Number(url.port) });
  let received = "";
  socket.setEncoding("utf8");
  socket.on("data", (chunk: string) => {
    received += chunk;
  });
  const closed = new Promise<void>((resolveClosed) => socket.on("close", () => resolveClosed()));
  const half = Math.floor(body.length / 2);
  socket.write(
    `POST ${path} HTTP/1.1\r\nHost: ${url.host}\r\nContent-Type: application/json\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body.slice(0, half)}`,
  );
  return {
    finish: () => socket.write(body.slice(half)),
    response: async () => {
      await closed;
      return received;
    },
  };
}

describe("graceful shutdown", () => {
  test("SIGTERM while a slow request is in flight: the request completes, then the process exits 0", async () => {
    server = await startServer({
      env: childEnv({ PORT: "0", HOST: "127.0.0.1", DATA_DIR: dataDir, JWT_SECRET: TEST_JWT_SECRET }),
    });
    const running = server;
    const spec = (await (await fetch(`${running.baseUrl}/api/v1/public-openapi.json`)).json()) as {
      paths: Record<string, Record<string, { requestBody?: unknown }>>;
    };
    // A public route that reads a JSON body keeps the request open until the body has fully arrived
    // (an authenticated one would answer 401 before reading it).
    const bodyRoute = ["/api/v1/auth/register", "/api/v1/auth/token"].find(
      (path) => spec.paths[path]?.post?.requestBody !== undefined,
    );
    expect(bodyRoute).toBeDefined();

    const slow = startSlowRequest(running.baseUrl, bodyRoute as string, JSON.stringify({ unexpected: "x" }));
    // The request must be in the server's hands before the signal; this is a generous margin, not a race.
    await Bun.sleep(500);
    running.proc.kill("SIGTERM");
    for (let i = 0; i < 100 && !running.output.some((l) => l.includes('"msg":"shutting down"')); i++) {
      await Bun.sleep(50);
    }
    expect(running.output.some((l) => l.includes('"msg":"shutting down"'))).toBe(true);
    expect(running.proc.exitCode).toBeNull();

    slow.finish();
    const raw = await slow.response();
    expect(raw).toMatch(/^HTTP\/1\.1 422 /);
    expect(raw).toContain('"errorCode":"VALIDATION_ERROR"');

    expect(await running.proc.exited).toBe(0);
    const messages = running.output.flatMap((line) => {
      try {
        return [(JSON.parse(line) as { msg: string }).msg];
      } catch {
        return [];
      }
    });
    expect(messages.at(-1)).toBe("stopped");
  }, 120_000);

  test("a new connection after SIGTERM is refused", async () => {
    const running = server as ServerProcess;
    await running.proc.exited;
    await expect(fetch(`${running.baseUrl}/health`)).rejects.toThrow();
  });
});
