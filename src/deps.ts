/**
 * The service's long-lived parts, built once at start-up from the config and handed to every module.
 * Each infrastructure piece sits behind a small interface with an embedded and a real implementation.
 */
import { join } from "node:path";
import type { AppDeps, Lifecycle } from "./app-deps";
import { createAppEvents } from "./app-events";
import type { Config } from "./config";
import { openDatabase } from "./db/client";
import { migrate } from "./db/migrate";
import { buildNativeKernels, configureNativeKernels } from "./engine/native";
import type { ServingTuning } from "./engine/ranking/candidates";
import { monitorLoopDelay } from "./http/loop-delay";
import { Metrics } from "./http/metrics";
import type { TenantGuard } from "./http/tenant";
import { instanceIdentity } from "./jobs/instance";
import { JobRunner } from "./jobs/runner";
import { MODULES } from "./modules";
import { AttributionQueue } from "./modules/analytics/attribution-queue";
import { createIdentity } from "./modules/auth/identity";
import { createPaymentProvider } from "./modules/billing/create-provider";
import { RunningExperiments } from "./modules/experiments/running";
import { HealthMonitor } from "./modules/health/monitor";
import { KnownUserWriter } from "./modules/interactions/known-user-writes";
import type { ServiceModule } from "./modules/module";
import { Readiness } from "./modules/ops/readiness";
import { loadPlanTable } from "./modules/plans/catalog";
import { PlanEnforcer } from "./modules/plans/enforcer";
import { RecommendationService } from "./modules/recommendations/serving/service";
import { createLogger, type Logger } from "./shared/logger";
import { createRateLimiter, openRedis } from "./shared/rate-limit";
import { createUsageMeter } from "./shared/usage-meter";
import { ArtifactCache } from "./snapshots/artifact-cache";
import { SnapshotRegistry } from "./snapshots/registry";

export interface CreateDepsOptions {
  logger?: Logger;
  /** Overrides the PGlite location (tests use "memory://"). */
  pgliteDataDir?: string;
  /** Candidate-path thresholds of the recommender; tests pass their own to force small tenants through HNSW. */
  servingTuning?: Readonly<ServingTuning>;
  /** The modules whose job kinds, guards and background work to build; default: src/modules/index.ts. */
  modules?: readonly ServiceModule[];
}

export type { AppDeps, Lifecycle } from "./app-deps";

/** Interaction statements under way at once on Postgres (see known-user-writes.ts); the pool has more. */
const KNOWN_USER_WRITES_IN_FLIGHT = 4;

export async function createDeps(
  config: Config,
  options: CreateDepsOptions = {},
): Promise<AppDeps & Lifecycle> {
  const logger = options.logger ?? createLogger(config.logLevel);
  // Before anything fits or folds in on this thread; training workers get the same settings with each run.
  configureNativeKernels(config.nativeKernels);
  // Compiled while the database opens (a first start after an install or upgrade), not by the first request.
  const kernels = buildNativeKernels();
  // Before anything opens: a bad PLANS_FILE stops start-up with a ConfigError naming it.
  const plans = loadPlanTable(config.plansFile, config.trainingsPerDay);
  const database = await openDatabase({
    url: config.databaseUrl,
    dataDir: options.pgliteDataDir ?? `${config.dataDir}/pglite`,
    statementTimingsFile: config.embeddedStoreTimings,
  });
  const applied = await migrate(database);
  await kernels;
  if (applied.length > 0) logger.info("migrations applied", { migrations: applied });
  const events = createAppEvents();
  const health = new HealthMonitor(database, logger);
  const metrics = new Metrics(config.version);
  const readiness = new Readiness(health);
  const tenantGuards: TenantGuard[] = [];
  const redis = config.redisUrl === undefined ? undefined : openRedis(config.redisUrl);
  const identity = createIdentity(config, logger, database, redis);
  const rateLimiter = createRateLimiter({ redis, prefix: `${config.redisKeyPrefix}rl:`, logger });
  const usageMeter = createUsageMeter({ database, logger, redis, prefix: `${config.redisKeyPrefix}usage:` });
  const planEnforcer = new PlanEnforcer({ plans, database, logger, rateLimiter, usageMeter });
  const payments = createPaymentProvider(config, database, logger);
  const jobs = new JobRunner({
    database,
    logger,
    concurrency: config.jobConcurrency,
    instanceId: instanceIdentity(config.dataDir),
  });
  // On the embedded store the files are the artifacts (PGlite runs on this thread: 100 MB written into it
  // stalled every request for seconds); on Postgres they are local copies of the database's.
  const experiments = new RunningExperiments(database, logger);
  const artifacts = new ArtifactCache(join(config.dataDir, "artifacts"), logger, {
    primary: database.kind === "pglite",
    pinned: (accountId) => experiments.pinnedModels(accountId),
  });
  const snapshots = new SnapshotRegistry({
    database,
    logger,
    maxBytes: config.snapshotCacheMb * 1024 * 1024,
    events,
    metrics,
    artifacts,
  });
  const recommendations = new RecommendationService(database, logger, snapshots, events, {
    ...(options.servingTuning === undefined ? {} : { tuning: options.servingTuning }),
  });
  const attributions = new AttributionQueue(database, recommendations.logs, logger, events);
  const modules = options.modules ?? MODULES;
  const stopModules: (() => Promise<void> | void)[] = [];
  let stopLoopDelay: (() => void) | undefined;

  const deps: AppDeps = {
    config,
    logger,
    database,
    health,
    metrics,
    readiness,
    identity,
    tenantGuards,
    plans,
    redis,
    rateLimiter,
    usageMeter,
    planEnforcer,
    payments,
    jobs,
    snapshots,
    artifacts,
    recommendations,
    attributions,
    experiments,
    events,
    interactionWrites: new KnownUserWriter(
      database,
      database.kind === "pglite" ? 1 : KNOWN_USER_WRITES_IN_FLIGHT,
    ),
  };
  // The modules' own parts: guards in list order, job kinds before the runner starts, background work on start.
  for (const module of modules) {
    tenantGuards.push(...(module.guards?.(deps) ?? []));
    for (const kind of module.jobKinds?.(deps) ?? []) jobs.registerJobKind(kind);
  }

  return {
    ...deps,
    async start() {
      // Without an offline queue nothing waits for the connection: open it before the first request.
      // Unreachable at start-up: the limits count in this process until it is (see RedisCircuit).
      await redis
        ?.connect()
        .catch((error: unknown) => logger.error("Redis unreachable at start-up", { error }));
      await health.start();
      await identity.start();
      usageMeter.start();
      for (const module of modules) {
        if (module.start !== undefined) stopModules.push(await module.start(deps));
      }
      await snapshots.start();
      await experiments.start();
      await recommendations.start();
      attributions.start();
      await jobs.start();
      stopLoopDelay = monitorLoopDelay(metrics);
    },
    async stop() {
      stopLoopDelay?.();
      stopLoopDelay = undefined;
      // First: workers finish their current chunk while the database is still open.
      await jobs.stop();
      // Before the recommendation log stops: a last attribution writes the log first.
      await attributions.stop();
      await recommendations.stop();
      experiments.stop();
      await snapshots.stop();
      // Modules' background work stops before the parts it uses, latest started first.
      for (const stop of stopModules.splice(0).reverse()) await stop();
      health.stop();
      await identity.stop();
      await usageMeter.stop().catch((error: unknown) => logger.error("final usage flush failed", { error }));
      await rateLimiter.close();
      redis?.close();
      await database.close();
    },
  };
}
