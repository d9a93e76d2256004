/**
 * The service's long-lived parts, built once at start-up from the config and handed to every module.
 * Each infrastructure piece sits behind a small interface with an embedded and a real implementation.
 */
import { join } from "node:path";
import type { RedisClient } from "bun";
import type { Config } from "./config";
import { type Database, openDatabase } from "./db/client";
import { migrate } from "./db/migrate";
import { Metrics } from "./http/metrics";
import type { TenantGuard } from "./http/tenant";
import { instanceIdentity } from "./jobs/instance";
import { JobRunner } from "./jobs/runner";
import { AttributionQueue } from "./modules/analytics/attribution-queue";
import { emailGraceGuard } from "./modules/auth/email-grace-guard";
import { createIdentity, type Identity } from "./modules/auth/identity";
import { createPaymentProvider } from "./modules/billing/create-provider";
import { LapseSweeper } from "./modules/billing/lapse-sweeper";
import type { PaymentProvider } from "./modules/billing/provider";
import { bridgeErasureNotifications } from "./modules/end-users/events";
import { RunningExperiments } from "./modules/experiments/running";
import { HealthMonitor } from "./modules/health/monitor";
import { ingestionJobKind } from "./modules/ingestion/process";
import { Readiness } from "./modules/ops/readiness";
import { loadPlanTable } from "./modules/plans/catalog";
import { PlanEnforcer } from "./modules/plans/enforcer";
import { remainingCatalogueCapacity } from "./modules/plans/limits";
import type { PlanTableType } from "./modules/plans/schemas";
import { RecommendationService } from "./modules/recommendations/serving/service";
import type { ServingTuning } from "./modules/recommendations/serving/tuning";
import { createLogger, type Logger } from "./shared/logger";
import { createRateLimiter, openRedis, type RateLimiter } from "./shared/rate-limit";
import { createUsageMeter, type UsageMeter } from "./shared/usage-meter";
import { ArtifactCache } from "./snapshots/artifact-cache";
import { SnapshotRegistry } from "./snapshots/registry";
import { trainingJobKind } from "./training/job-kind";

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
  /** The plan table (built in or PLANS_FILE); look plans up with planOf (src/modules/plans/plan-of.ts). */
  readonly plans: Readonly<PlanTableType>;
  /** Shared Redis connection when REDIS_URL is set. */
  readonly redis: RedisClient | undefined;
  /** Atomic fixed-window counters (src/shared/rate-limit), in memory or Redis. */
  readonly rateLimiter: RateLimiter;
  /** Per-account daily usage counters flushed to usage_daily; record through recordUsage (modules/usage). */
  readonly usageMeter: UsageMeter;
  /** Per-minute, monthly and bulk limits and the lapsed-subscription rule (a tenant guard). */
  readonly planEnforcer: PlanEnforcer;
  /** The payment-provider adapter chosen by PAYMENT_PROVIDER (src/modules/billing/provider.ts); undefined: not configured. */
  readonly payments: PaymentProvider | undefined;
  /** Background jobs (src/jobs/runner.ts): registerJobKind before start, announce(kind) after enqueueing. */
  readonly jobs: JobRunner;
  /** Per-tenant in-memory model snapshots for serving (src/snapshots/registry.ts, types in types.ts). */
  readonly snapshots: SnapshotRegistry;
  /** Model artifact files under DATA_DIR: the artifacts on the embedded store, local copies on Postgres. */
  readonly artifacts: ArtifactCache;
  /** Recommender caches (per-user history, no-model catalogue) and the batched recommendation log. */
  readonly recommendations: RecommendationService;
  /** Credits clicks, carts and purchases to the answers that showed them (modules/analytics). */
  readonly attributions: AttributionQueue;
  /** The running A/B experiments, for assigning requests to arms (modules/experiments). */
  readonly experiments: RunningExperiments;
}

export interface Lifecycle {
  start(): Promise<void>;
  stop(): Promise<void>;
}

export interface CreateDepsOptions {
  logger?: Logger;
  /** Overrides the PGlite location (tests use "memory://"). */
  pgliteDataDir?: string;
  /** Candidate-path thresholds of the recommender; tests pass their own to force small tenants through HNSW. */
  servingTuning?: Readonly<ServingTuning>;
}

export async function createDeps(
  config: Config,
  options: CreateDepsOptions = {},
): Promise<AppDeps & Lifecycle> {
  const logger = options.logger ?? createLogger(config.logLevel);
  // Before anything opens: a bad PLANS_FILE stops start-up with a ConfigError naming it.
  const plans = loadPlanTable(config.plansFile);
  const database = await openDatabase({
    url: config.databaseUrl,
    dataDir: options.pgliteDataDir ?? `${config.dataDir}/pglite`,
  });
  const applied = await migrate(database);
  if (applied.length > 0) logger.info("migrations applied", { migrations: applied });
  const health = new HealthMonitor(database, logger);
  const metrics = new Metrics(config.version);
  const readiness = new Readiness(health);
  const tenantGuards: TenantGuard[] = [emailGraceGuard()];
  const redis = config.redisUrl === undefined ? undefined : openRedis(config.redisUrl);
  const identity = createIdentity(config, logger, database, redis);
  const rateLimiter = createRateLimiter({ redis, prefix: `${config.redisKeyPrefix}rl:`, logger });
  const usageMeter = createUsageMeter({ database, logger, redis, prefix: `${config.redisKeyPrefix}usage:` });
  const planEnforcer = new PlanEnforcer({ plans, database, logger, rateLimiter, usageMeter });
  tenantGuards.push(planEnforcer.guard);
  const payments = createPaymentProvider(config, database, logger);
  const lapseSweeper = new LapseSweeper({ database, identity, logger, payments });
  const jobs = new JobRunner({
    database,
    logger,
    concurrency: config.jobConcurrency,
    instanceId: instanceIdentity(config.dataDir),
  });
  jobs.registerJobKind(
    ingestionJobKind({
      database,
      config,
      capacity: (tx, accountId, kind) => remainingCatalogueCapacity({ plans, database }, tx, accountId, kind),
      onApplied: (accountId, records) => usageMeter.record(accountId, { ingestedRecords: records }),
    }),
  );
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
    metrics,
    artifacts,
  });
  jobs.registerJobKind(
    trainingJobKind({ database, logger, snapshots, metrics, artifacts, databaseUrl: config.databaseUrl }),
  );
  const recommendations = new RecommendationService(database, logger, snapshots, {
    ...(options.servingTuning === undefined ? {} : { tuning: options.servingTuning }),
  });
  const attributions = new AttributionQueue(database, recommendations.logs, logger);
  let stopErasureBridge: (() => Promise<void>) | undefined;

  return {
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
    async start() {
      // Without an offline queue nothing waits for the connection: open it before the first request.
      // Unreachable at start-up: the limits count in this process until it is (see RedisCircuit).
      await redis
        ?.connect()
        .catch((error: unknown) => logger.error("Redis unreachable at start-up", { error }));
      await health.start();
      await identity.start();
      usageMeter.start();
      lapseSweeper.start();
      stopErasureBridge = await bridgeErasureNotifications(database, logger);
      await snapshots.start();
      await experiments.start();
      await recommendations.start();
      attributions.start();
      await jobs.start();
    },
    async stop() {
      // First: workers finish their current chunk while the database is still open.
      await jobs.stop();
      // Before the recommendation log stops: a last attribution writes the log first.
      await attributions.stop();
      await recommendations.stop();
      experiments.stop();
      await snapshots.stop();
      await stopErasureBridge?.();
      health.stop();
      await identity.stop();
      lapseSweeper.stop();
      await usageMeter.stop().catch((error: unknown) => logger.error("final usage flush failed", { error }));
      await rateLimiter.close();
      redis?.close();
      await database.close();
    },
  };
}
