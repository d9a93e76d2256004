/**
 * What every module is handed: the app's long-lived parts, built once by createDeps (src/deps.ts). A leaf
 * of types, so modules can name it without importing the code that builds them.
 */
import type { RedisClient } from "bun";
import type { AppEvents } from "./app-events";
import type { Config } from "./config";
import type { Database } from "./db/client";
import type { Metrics } from "./http/metrics";
import type { TenantGuard } from "./http/tenant";
import type { JobRunner } from "./jobs/runner";
import type { AttributionQueue } from "./modules/analytics/attribution-queue";
import type { Identity } from "./modules/auth/identity";
import type { PaymentProvider } from "./modules/billing/provider";
import type { RunningExperiments } from "./modules/experiments/running";
import type { HealthMonitor } from "./modules/health/monitor";
import type { KnownUserWriter } from "./modules/interactions/known-user-writes";
import type { Readiness } from "./modules/ops/readiness";
import type { PlanEnforcer } from "./modules/plans/enforcer";
import type { PlanTableType } from "./modules/plans/schemas";
import type { RecommendationService } from "./modules/recommendations/serving/service";
import type { Logger } from "./shared/logger";
import type { RateLimiter } from "./shared/rate-limit";
import type { UsageMeter } from "./shared/usage-meter";
import type { ArtifactCache } from "./snapshots/artifact-cache";
import type { SnapshotRegistry } from "./snapshots/registry";

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
  /** Run in order after authentication on every authenticated route: the modules' guards, in list order. */
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
  /** This app's in-process event buses (src/app-events.ts): writes announce, caches listen. */
  readonly events: AppEvents;
  /** Interactions of known end users, written together when they arrive together (modules/interactions). */
  readonly interactionWrites: KnownUserWriter;
}

export interface Lifecycle {
  start(): Promise<void>;
  stop(): Promise<void>;
}
