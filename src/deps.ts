/**
 * The service's long-lived parts, built once at start-up from the config and handed to every module.
 * Each infrastructure piece sits behind a small interface with an embedded and a real implementation.
 */
import type { Config } from "./config";
import { type Database, openDatabase } from "./db/client";
import { migrate } from "./db/migrate";
import type { TenantGuard } from "./http/auth";
import { Metrics } from "./http/metrics";
import { emailGraceGuard } from "./modules/auth/email-grace-guard";
import { createIdentity, type Identity } from "./modules/auth/identity";
import { HealthMonitor } from "./modules/health/monitor";
import { Readiness } from "./modules/ops/readiness";
import { createLogger, type Logger } from "./shared/logger";

export interface AppDeps {
  readonly config: Config;
  readonly logger: Logger;
  readonly database: Database;
  readonly health: HealthMonitor;
  /** Prometheus registry (src/http/metrics.ts): observeTraining, setSnapshotBytes, cacheHit/cacheMiss. */
  readonly metrics: Metrics;
  /** GET /ready checks; register a component with readiness.register(name, probe). */
  readonly readiness: Readiness;
  /** API keys, accounts cache, key last-use buffer, login throttle, mailer (src/modules/auth/identity.ts). */
  readonly identity: Identity;
  /** Run in order after authentication on every authenticated route; modules push theirs in createDeps. */
  readonly tenantGuards: TenantGuard[];
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
  const metrics = new Metrics(config.version);
  const readiness = new Readiness(health);
  const identity = createIdentity(config, logger, database);
  const tenantGuards: TenantGuard[] = [emailGraceGuard((accountId) => identity.accounts.get(accountId))];

  return {
    config,
    logger,
    database,
    health,
    metrics,
    readiness,
    identity,
    tenantGuards,
    async start() {
      await health.start();
      await identity.start();
    },
    async stop() {
      health.stop();
      await identity.stop();
      await database.close();
    },
  };
}
