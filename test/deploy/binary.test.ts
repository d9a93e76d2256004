/**
 * The single executable (`bun run build`), run the way a shop would run it: copied into an empty
 * directory, started with a clean environment, no node_modules and — where the test may create a mount
 * namespace (root + unshare) — with the project checkout hidden, so nothing can be loaded from it.
 * Opt-in (RUN_BINARY_TEST=1) because it builds a ~120 MB binary; .ci/run runs it as its own step.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { copyFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { makeTempDir } from "../helpers/temp-dirs";
import { childEnv, PROJECT_ROOT, type ServerProcess, startServer } from "./support/server-process";

const enabled = process.env.RUN_BINARY_TEST === "1";
const BUILD_TIMEOUT_MS = 240_000;
const TRAINING_TIMEOUT_MS = 240_000;

const buildDir = makeTempDir("rs-binary-build-");
const runDir = makeTempDir("rs-binary-run-");
const builtBinary = join(buildDir, "recommendation-service");
const binary = join(runDir, "recommendation-service");

/** Hides the checkout (and its node_modules) from the child when a private mount namespace is possible. */
function isolatedCommand(args: string[]): { command: string[]; isolated: boolean } {
  const unshare = Bun.which("unshare");
  if (unshare !== null && process.getuid?.() === 0) {
    const probe = Bun.spawnSync([unshare, "-m", "sh", "-c", `mount -t tmpfs none "${PROJECT_ROOT}"`]);
    if (probe.exitCode === 0) {
      const quoted = args.map((a) => `'${a}'`).join(" ");
      return {
        command: [unshare, "-m", "sh", "-c", `mount -t tmpfs none "${PROJECT_ROOT}" && exec ${quoted}`],
        isolated: true,
      };
    }
  }
  return { command: args, isolated: false };
}

let server: ServerProcess | undefined;
let isolated = false;
let paths: Record<string, Record<string, unknown>> = {};

beforeAll(async () => {
  if (!enabled) return;
  const build = Bun.spawn([process.execPath, "run", "scripts/build.ts", "--outfile", builtBinary], {
    cwd: PROJECT_ROOT,
    env: process.env,
    stdout: "pipe",
    stderr: "pipe",
  });
  const timer = setTimeout(() => build.kill("SIGKILL"), BUILD_TIMEOUT_MS);
  const [code, out, err] = await Promise.all([
    build.exited,
    new Response(build.stdout).text(),
    new Response(build.stderr).text(),
  ]);
  clearTimeout(timer);
  if (code !== 0) throw new Error(`build failed (${code}):\n${out}\n${err}`);
  copyFileSync(builtBinary, binary);
  rmSync(buildDir, { recursive: true, force: true });

  const run = isolatedCommand([binary]);
  isolated = run.isolated;
  // A clean environment: no DATA_DIR, no secrets — the defaults must carry a first start.
  server = await startServer({
    command: run.command,
    cwd: runDir,
    env: childEnv({ PORT: "0", HOST: "127.0.0.1" }),
  });
  paths = (
    (await (await fetch(`${server.baseUrl}/api/v1/public-openapi.json`)).json()) as { paths: typeof paths }
  ).paths;
}, BUILD_TIMEOUT_MS + 120_000);

afterAll(async () => {
  await server?.stop("SIGKILL");
  rmSync(buildDir, { recursive: true, force: true });
  rmSync(runDir, { recursive: true, force: true });
});

const has = (method: string, path: string): boolean => paths[path]?.[method] !== undefined;

async function call<T = Record<string, unknown>>(
  method: string,
  path: string,
  options: { body?: unknown; apiKey?: string } = {},
): Promise<{ status: number; body: T }> {
  const headers: Record<string, string> = {};
  if (options.body !== undefined) headers["content-type"] = "application/json";
  if (options.apiKey !== undefined) headers["x-api-key"] = options.apiKey;
  const res = await fetch(`${(server as ServerProcess).baseUrl}${path}`, {
    method,
    headers,
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
  });
  const text = await res.text();
  return { status: res.status, body: (text === "" ? {} : JSON.parse(text)) as T };
}

describe.skipIf(!enabled)("single binary from an empty directory", () => {
  test("serves /health and /ready on the embedded database", async () => {
    if (!isolated)
      console.warn("note: checkout not hidden (needs root and unshare); ran from a temp dir only");
    const health = await call<{ status: string; database: { kind: string; state: string } }>(
      "GET",
      "/health",
    );
    expect(health.status).toBe(200);
    expect(health.body.database).toMatchObject({ kind: "pglite", state: "up" });
    expect((await call("GET", "/ready")).status).toBe(200);
  });

  test("serves the OpenAPI document and the docs page", async () => {
    expect(Object.keys(paths)).toContain("/health");
    const docs = await fetch(`${(server as ServerProcess).baseUrl}/api/v1/docs`);
    expect(docs.status).toBe(200);
  });

  test("serves the dashboard and its assets (embedded in the binary), and sends browsers from / to it", async () => {
    const base = (server as ServerProcess).baseUrl;
    const shell = await fetch(`${base}/dashboard`);
    expect(shell.status).toBe(200);
    expect(shell.headers.get("content-type")).toContain("text/html");
    const html = await shell.text();
    const assets = [...html.matchAll(/\/dashboard\/assets\/[\w.-]+/g)].map((match) => match[0]);
    expect(assets.some((path) => path.endsWith(".js"))).toBe(true);
    expect(assets.some((path) => path.endsWith(".css"))).toBe(true);
    for (const path of assets) {
      const asset = await fetch(`${base}${path}`);
      expect({ path, status: asset.status }).toEqual({ path, status: 200 });
      expect(asset.headers.get("content-type")).toMatch(path.endsWith(".js") ? /javascript/ : /text\/css/);
      expect((await asset.text()).length).toBeGreaterThan(1000);
    }
    // A path of the app (routed in the browser) answers the same shell.
    expect(await (await fetch(`${base}/dashboard/training`)).text()).toBe(html);
    const root = await fetch(`${base}/`, { headers: { accept: "text/html" }, redirect: "manual" });
    expect(root.status).toBe(302);
    expect(root.headers.get("location")).toBe("/dashboard");
    expect((await fetch(`${base}/`)).status).toBe(404);
  });

  test("serves the widget bundled into the binary (no source tree to build it from)", async () => {
    const res = await fetch(`${(server as ServerProcess).baseUrl}/widget.js`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    const js = await res.text();
    expect(js).toContain("data-recs");
    expect(js.length).toBeGreaterThan(1000);
  });

  test("register → create product → read it back round trip", async () => {
    if (!has("post", "/api/v1/auth/register") || !has("post", "/api/v1/products/")) {
      console.warn("skipped: register or product routes are not in this build");
      return;
    }
    const registered = await call<{ apiKey: string }>("POST", "/api/v1/auth/register", {
      body: { accountName: "Binary Shop", email: "owner@binary.example.com", password: "binary-pass-123" },
    });
    expect([200, 201]).toContain(registered.status);
    const apiKey = registered.body.apiKey;
    const product = { externalId: "sku-1", name: "Kettle", price: 25, category: "kitchen/appliances" };
    const created = await call("POST", "/api/v1/products/", { apiKey, body: product });
    expect(created.status).toBe(201);
    if (has("get", "/api/v1/products/{external_id}")) {
      const read = await call("GET", "/api/v1/products/sku-1", { apiKey });
      expect(read.status).toBe(200);
      expect(read.body.name).toBe("Kettle");
    }
  });

  test(
    "trains a model in the binary (C kernels or their TypeScript twins) and serves from it",
    async () => {
      const jobStatus = "/api/v1/pipeline/jobs/{job_id}/status";
      if (!has("post", "/api/v1/sandbox/quick-start") || !has("get", jobStatus)) {
        console.warn("skipped: sandbox quick-start or training job routes are not in this build");
        return;
      }
      const registered = await call<{ apiKey: string }>("POST", "/api/v1/auth/register", {
        body: {
          accountName: "Binary Trainer",
          email: "trainer@binary.example.com",
          password: "binary-pass-123",
        },
      });
      const apiKey = registered.body.apiKey;
      const started = await call<{ jobId: number | null }>("POST", "/api/v1/sandbox/quick-start", { apiKey });
      expect(started.status).toBe(200);
      expect(started.body.jobId).not.toBeNull();
      const deadline = Date.now() + TRAINING_TIMEOUT_MS;
      let status = "queued";
      let last: Record<string, unknown> = {};
      while (Date.now() < deadline && (status === "queued" || status === "running")) {
        await Bun.sleep(1000);
        last = (await call("GET", `/api/v1/pipeline/jobs/${started.body.jobId}/status`, { apiKey })).body;
        status = String(last.status);
      }
      expect(last).toMatchObject({ status: "completed" });
      if (has("get", "/api/v1/pipeline/status")) {
        expect((await call("GET", "/api/v1/pipeline/status", { apiKey })).status).toBe(200);
      }
      const similar = "/api/v1/recommendations/products/external/{external_product_id}/similar";
      if (has("get", "/api/v1/products/") && has("get", similar)) {
        const listed = await call<{ items: { externalId: string }[] }>("GET", "/api/v1/products/", {
          apiKey,
        });
        const productId = encodeURIComponent(listed.body.items[0]?.externalId ?? "");
        const served = await call<{ items: unknown[] }>(
          "GET",
          `/api/v1/recommendations/products/external/${productId}/similar`,
          { apiKey },
        );
        expect(served.status).toBe(200);
        expect(served.body.items.length).toBeGreaterThan(0);
      }
    },
    TRAINING_TIMEOUT_MS + 30_000,
  );

  test("--self-check: embedded PGlite, the hnswlib addon and the kernels work on this machine", async () => {
    const run = isolatedCommand([binary, "--self-check"]);
    const proc = Bun.spawn(run.command, { cwd: runDir, env: childEnv({}), stdout: "pipe", stderr: "pipe" });
    const [code, out] = await Promise.all([proc.exited, new Response(proc.stdout).text()]);
    const report = JSON.parse(out) as { ok: boolean; checks: Record<string, { ok: boolean }> };
    expect(report.checks.database?.ok).toBe(true);
    expect(report.checks.hnswlib?.ok).toBe(true);
    expect(report.checks.nativeKernels?.ok).toBe(true);
    expect(code).toBe(0);
  }, 120_000);

  test("SIGTERM exits 0 after logging the shutdown, and the data stays in ./data", async () => {
    const running = server as ServerProcess;
    expect(await running.stop("SIGTERM")).toBe(0);
    expect(running.output.some((line) => line.includes('"msg":"stopped"'))).toBe(true);
    expect(await Bun.file(join(runDir, "data", "jwt-secret")).exists()).toBe(true);
  });
});
