/**
 * The service's long-lived parts, built once at start-up from the config and handed to every module.
 * Each infrastructure piece sits behind a small interface with an embedded and a real implementation.
 */
import type { Config } from "./config";
import { type Database, openDatabase } from "./db/client";
import { migrate } from "./db/migrate";
import { HealthMonitor } from "./modules/health/monitor";
import { createLogger, type Logger } from "./shared/logger";

export interface AppDeps {
  readonly config: Config;
  readonly logger: Logger;
  readonly database: Database;
  readonly health: HealthMonitor;
}

export interface Lifecycle {
  start(): Promise<void>;
  stop(): Promise<void>;
}

export interface CreateDepsOptions {
  logger?: Logger;
  /** Overrides the PGlite location (tests use "memory://"). */
  pgliteDataDir?: string;
}

export async function createDeps(
  config: Config,
  options: CreateDepsOptions = {},
): Promise<AppDeps & Lifecycle> {
  const logger = options.logger ?? createLogger(config.logLevel);
  const database = await openDatabase({
    url: config.databaseUrl,
    dataDir: options.pgliteDataDir ?? `${config.dataDir}/pglite`,
  });
  const applied = await migrate(database);
  if (applied.length > 0) logger.info("migrations applied", { migrations: applied });
  const health = new HealthMonitor(database, logger);

  return {
    config,
    logger,
    database,
    health,
    async start() {
      await health.start();
    },
    async stop() {
      health.stop();
      await database.close();
    },
  };
}
