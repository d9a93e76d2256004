/**
 * The service's life: parse settings, open the store, serve HTTP, and shut down gracefully on SIGTERM/SIGINT.
 * src/main.ts runs it with the module list as built; a test harness may hand it another list (a module built
 * with test-only options), so no test knob has to live in the production config.
 */
import { readFileSync } from "node:fs";
import { createApp } from "./app";
import { ConfigError, loadConfig } from "./config";
import { exitWhenStoreLost } from "./db/store-lost";
import { createDeps } from "./deps";
import { MODULES } from "./modules";
import type { ServiceModule } from "./modules/module";
import { createLogger } from "./shared/logger";
import { exitWithParent, startWorkers, type WorkerPool } from "./workers";

export interface ServeOptions {
  /** The modules to run; the default is the service's own list (src/modules/index.ts). */
  readonly modules?: readonly ServiceModule[];
}

/** How long SIGTERM waits for in-flight requests before closing their connections. */
const SHUTDOWN_GRACE_MS = 25_000;

export async function serve(options: ServeOptions = {}): Promise<void> {
  const config = exitOnConfigError(() => loadConfig());
  const logger = createLogger(config.logLevel);
  const modules = options.modules ?? MODULES;
  // Some settings (PLANS_FILE) are only checked when the parts using them are built.
  const deps = await createDeps(config, { logger, modules }).catch(rethrowUnlessConfigError);
  exitWhenStoreLost(deps.database, logger);
  await deps.start();

  const app = createApp(deps, { precompile: true, modules });
  const tls = config.tls && {
    cert: readFileSync(config.tls.certFile),
    key: readFileSync(config.tls.keyFile),
  };
  // With several workers every process binds the same port (SO_REUSEPORT) and the kernel spreads the
  // connections; the first one binds it first, so PORT=0 gives the others the port it was given.
  const reusePort = config.workers > 1;
  app.listen({ port: config.port, hostname: config.host, reusePort, ...(tls ? { tls } : {}) });
  const server = app.server;
  const port = server?.port ?? config.port;
  logger.info("listening", {
    url: `${tls ? "https" : "http"}://${config.host}:${port}`,
    database: deps.database.kind,
    version: config.version,
    ...(reusePort ? { worker: config.workerIndex } : {}),
  });
  const workers: WorkerPool | undefined =
    reusePort && config.workerIndex === 0 ? startWorkers({ count: config.workers, port, logger }) : undefined;

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info("shutting down", { signal });
    deps.readiness.markStopping();
    const workersStopped = workers?.stop();
    // Stop accepting connections and let in-flight requests finish before closing the store; a request
    // still running after the grace period has its connection closed so the process can exit.
    const drained = server?.stop(false).then(() => "drained" as const);
    const outcome = await Promise.race([
      drained,
      Bun.sleep(SHUTDOWN_GRACE_MS).then(() => "timeout" as const),
    ]);
    if (outcome === "timeout") {
      logger.warn("in-flight requests outlived the shutdown grace period", { graceMs: SHUTDOWN_GRACE_MS });
      await server?.stop(true);
    }
    await workersStopped;
    await deps.stop();
    logger.info("stopped");
    process.exit(0);
  };
  process.on("SIGTERM", () => void shutdown("SIGTERM"));
  process.on("SIGINT", () => void shutdown("SIGINT"));
  if (config.workerIndex > 0) exitWithParent(() => void shutdown("supervisor gone"));
}

/** A bad setting ends the process with its message and exit code 78 (EX_CONFIG), without a stack trace. */
function exitOnConfigError<T>(build: () => T): T {
  try {
    return build();
  } catch (error) {
    return rethrowUnlessConfigError(error);
  }
}

function rethrowUnlessConfigError(error: unknown): never {
  if (error instanceof ConfigError) {
    process.stderr.write(`${error.message}\n`);
    process.exit(78);
  }
  throw error;
}
