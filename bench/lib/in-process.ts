import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AppDeps, Lifecycle } from "../../src/deps";
import { benchServerEnv, freePort, type ServerOptions } from "./server";

export interface InProcessServer {
  baseUrl: string;
  deps: AppDeps & Lifecycle;
  stop(): Promise<void>;
}

/**
 * The real app listening on 127.0.0.1 inside the bench process, for parts that must also reach the same
 * store directly (the ingestion baseline inserts into the very database the route writes to; PGlite cannot
 * be shared between processes).
 */
export async function startInProcessServer(options: ServerOptions): Promise<InProcessServer> {
  // Imported here, not at the top, so a service that does not build yet fails this part, not the whole bench.
  const { loadConfig } = await import("../../src/config");
  const { createDeps } = await import("../../src/deps");
  const { createApp } = await import("../../src/app");
  const dataDir = mkdtempSync(join(tmpdir(), "rs-bench-"));
  const port = await freePort();
  const config = loadConfig(benchServerEnv(dataDir, options, port));
  const deps = await createDeps(config);
  await deps.start();
  const app = createApp(deps);
  app.listen({ port, hostname: "127.0.0.1" });
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    deps,
    async stop() {
      await app.stop();
      await deps.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
