import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { childEnv, type ServerProcess, startServer, TEST_JWT_SECRET } from "../deploy/support/server-process";
import { makeTempDir } from "../helpers/temp-dirs";

const dir = makeTempDir("rs-tls-");
const certFile = join(dir, "cert.pem");
const keyFile = join(dir, "key.pem");
const hasOpenssl = Bun.which("openssl") !== null;
let server: ServerProcess | undefined;

beforeAll(async () => {
  if (!hasOpenssl) return;
  const made = Bun.spawnSync(
    [
      "openssl",
      "req",
      "-x509",
      "-newkey",
      "rsa:2048",
      "-nodes",
      "-subj",
      "/CN=localhost",
      "-days",
      "1",
      "-keyout",
      keyFile,
      "-out",
      certFile,
    ],
    { stdout: "ignore", stderr: "pipe" },
  );
  if (made.exitCode !== 0) throw new Error(`openssl failed: ${made.stderr.toString()}`);
  server = await startServer({
    env: childEnv({
      PORT: "0",
      HOST: "127.0.0.1",
      DATA_DIR: join(dir, "data"),
      JWT_SECRET: TEST_JWT_SECRET,
      TLS_CERT_FILE: certFile,
      TLS_KEY_FILE: keyFile,
    }),
    scheme: "https",
  });
}, 120_000);

afterAll(async () => {
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe.skipIf(!hasOpenssl)("HTTPS served directly (TLS_CERT_FILE / TLS_KEY_FILE)", () => {
  test("answers /health over TLS with the configured certificate", async () => {
    const running = server as ServerProcess;
    expect(running.baseUrl.startsWith("https://")).toBe(true);
    const res = await fetch(`${running.baseUrl}/health`, { tls: { rejectUnauthorized: false } });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { status: string }).status).toBe("ok");
    expect(running.output.some((l) => l.includes('"msg":"listening"') && l.includes("https://"))).toBe(true);
  });

  test("a client that checks certificates refuses the self-signed one (the TLS is real)", async () => {
    const running = server as ServerProcess;
    await expect(fetch(`${running.baseUrl}/health`)).rejects.toThrow();
  });

  test("plain HTTP on the TLS port gets no HTTP answer", async () => {
    const running = server as ServerProcess;
    const plain = running.baseUrl.replace("https://", "http://");
    const outcome = await fetch(`${plain}/health`, { signal: AbortSignal.timeout(10_000) }).then(
      (res) => res.status,
      () => "refused",
    );
    expect(outcome).not.toBe(200);
  });
});

if (!hasOpenssl) console.warn("TLS tests skipped: openssl is not installed");
