/**
 * Plan limits checked by the routes that create things: catalogue size and training frequency. The
 * request-rate limits are enforced for every route by the tenant guard (enforcer.ts).
 */

import { and, count, eq, gte, isNull, sql } from "drizzle-orm";
import type { Config } from "../../config";
import type { Database, Db, DbOrTx } from "../../db/client";
import { accounts, endUsers, products, trainingJobs } from "../../db/schema";
import type { TenantContext } from "../../http/tenant";
import { AppError } from "../../shared/errors";
import type { RateLimiter } from "../../shared/rate-limit";
import { retryAfterSeconds } from "../../shared/rate-limit";
import type { UsageMeter } from "../../shared/usage-meter";
import { STARTED_BY_CUSTOMER } from "../../training/started-by";
import type { PlanEnforcer } from "./enforcer";
import { effectivePlan } from "./plan-of";
import type { PlanTableType } from "./schemas";

type LimitDeps = {
  readonly plans: Readonly<PlanTableType>;
  readonly database: Database;
  readonly rateLimiter: RateLimiter;
  readonly planEnforcer: PlanEnforcer;
  readonly config: Config;
};
type TrainingDeps = LimitDeps & Partial<{ readonly usageMeter: UsageMeter }>;

const DAY_MS = 86_400_000;
/** Capacity does not come back with time; an hour is a sensible pause before trying again. */
const CAPACITY_RETRY_SECONDS = "3600";

export type CatalogueKind = "products" | "endUsers";

/**
 * Refuses with 429 PLAN_LIMIT_EXCEEDED when `adding` new records would take the account past its plan's
 * maxProducts / maxEndUsers. Pass only records that would be new (not updates of existing external ids).
 */
export async function assertCatalogueCapacity(
  deps: LimitDeps,
  tenant: Pick<TenantContext, "accountId" | "account">,
  kind: CatalogueKind,
  adding: number,
): Promise<void> {
  if (adding <= 0) return;
  const plan = effectivePlan(deps, tenant.account);
  const max = kind === "products" ? plan.limits.maxProducts : plan.limits.maxEndUsers;
  const current = await countCatalogue(deps, tenant.accountId, kind);
  if (current + adding > max) throw capacityExceeded(plan.name, kind, max, current, adding);
}

/** Per database handle and account: the catalogue size last counted, grown by what was admitted since. */
const recentCounts = new WeakMap<object, Map<string, { count: number; at: number }>>();
/** A count is trusted this long, and only while admitting stays under this share of the cap. */
const RECENT_COUNT_MS = 60_000;
const EXACT_ABOVE_SHARE = 0.9;

/**
 * The same refusal inside the caller's transaction, for writes that create records (a product or end user
 * created through its route, an interaction naming an end user the shop never sent): throwing rolls the
 * whole write back. Such writes are frequent, so the catalogue is counted exactly only near the cap or once
 * a minute; far below it the last count, grown by what this process admitted since, decides. An exact count
 * is taken under the account's catalogue lock, held until the caller commits, so writers that meet near the
 * cap are admitted one after the other and never take the catalogue past it together.
 */
export async function assertCatalogueCapacityIn(
  deps: { readonly plans: Readonly<PlanTableType>; readonly database: Database },
  tx: DbOrTx,
  accountId: number,
  kind: CatalogueKind,
  adding: number,
): Promise<void> {
  if (adding <= 0) return;
  const { max, plan } = await catalogueLimitIn(deps, tx, accountId, kind);
  let counts = recentCounts.get(deps.database);
  if (counts === undefined) {
    counts = new Map();
    recentCounts.set(deps.database, counts);
  }
  const key = `${kind}:${accountId}`;
  const recent = counts.get(key);
  const now = Date.now();
  if (
    recent !== undefined &&
    now - recent.at < RECENT_COUNT_MS &&
    recent.count + adding <= max * EXACT_ABOVE_SHARE
  ) {
    recent.count += adding;
    return;
  }
  await lockCatalogue(tx, accountId, kind);
  const current = await countCatalogue({ database: { ...deps.database, db: tx as Db } }, accountId, kind);
  if (current + adding > max) throw capacityExceeded(plan, kind, max, current, adding);
  counts.set(key, { count: current + adding, at: now });
}

/**
 * The account's lock for counting and then adding records of `kind`, released when the transaction ends.
 * A statement of its own, so the count after it sees what the previous holder committed.
 */
async function lockCatalogue(tx: DbOrTx, accountId: number, kind: CatalogueKind): Promise<void> {
  await tx.execute(
    sql`select pg_advisory_xact_lock(hashtext(${`catalogue-capacity:${kind}`}), ${accountId})`,
  );
}

async function catalogueLimitIn(
  deps: { readonly plans: Readonly<PlanTableType> },
  tx: DbOrTx,
  accountId: number,
  kind: CatalogueKind,
): Promise<{ max: number; plan: string }> {
  const [account] = await tx
    .select({ plan: accounts.plan, subscriptionStatus: accounts.subscriptionStatus })
    .from(accounts)
    .where(eq(accounts.id, accountId));
  const plan = effectivePlan(deps, account ?? { plan: "FREE", subscriptionStatus: "none" });
  return { max: kind === "products" ? plan.limits.maxProducts : plan.limits.maxEndUsers, plan: plan.name };
}

function capacityExceeded(
  plan: string,
  kind: CatalogueKind,
  max: number,
  current: number,
  adding: number,
): AppError {
  const label = kind === "products" ? "products" : "end users";
  return new AppError(
    "PLAN_LIMIT_EXCEEDED",
    `The ${plan} plan allows ${max} ${label}; the account has ${current} and this would add ${adding}`,
    { headers: { "Retry-After": CAPACITY_RETRY_SECONDS } },
  );
}

export async function countCatalogue(
  deps: { readonly database: Database },
  accountId: number,
  kind: CatalogueKind,
): Promise<number> {
  const { db } = deps.database;
  const [row] =
    kind === "products"
      ? await db
          .select({ n: count() })
          .from(products)
          .where(and(eq(products.accountId, accountId), isNull(products.deletedAt)))
      : await db.select({ n: count() }).from(endUsers).where(eq(endUsers.accountId, accountId));
  return Number(row?.n ?? 0);
}

/**
 * How many more records of `kind` the account's plan admits, read inside the caller's transaction under the
 * account's catalogue lock (bulk ingestion asks once per chunk and turns records past the cap into record
 * errors instead of failing; chunks of concurrent jobs of one account are admitted one after the other).
 */
export async function remainingCatalogueCapacity(
  deps: { readonly plans: Readonly<PlanTableType>; readonly database: Database },
  tx: DbOrTx,
  accountId: number,
  kind: CatalogueKind,
): Promise<{ remaining: number; max: number; plan: string }> {
  const { max, plan } = await catalogueLimitIn(deps, tx, accountId, kind);
  await lockCatalogue(tx, accountId, kind);
  const current = await countCatalogue({ database: { ...deps.database, db: tx as Db } }, accountId, kind);
  return { remaining: Math.max(0, max - current), max, plan };
}

/** Trainings allowed today: the plan's trainingsPerDay (TRAININGS_PER_DAY already applied to the table). */
export function trainingsPerDayOf(
  deps: { readonly plans: Readonly<PlanTableType> },
  tenant: Pick<TenantContext, "account">,
): number {
  return effectivePlan(deps, tenant.account).limits.trainingsPerDay;
}

/**
 * Reserves one of today's training runs (UTC day) or refuses with 429 TRAINING_TOO_FREQUENT. Call it once
 * per training request, right before enqueuing; concurrent calls never reserve more than the limit. A
 * reserved run is counted in the account's usage (`trainings`), so callers need not record it again.
 */
export async function assertTrainingAllowed(
  deps: TrainingDeps,
  tenant: Pick<TenantContext, "accountId" | "account">,
): Promise<void> {
  const limit = trainingsPerDayOf(deps, tenant);
  const now = deps.planEnforcer.now();
  const dayIndex = Math.floor(now / DAY_MS);
  const dayStart = new Date(dayIndex * DAY_MS);
  // Jobs already in the table this day cover what other processes (or this one before a restart) started.
  // Retrainings the service starts after end-user erasures are its own obligation, never the plan's.
  const [row] = await deps.database.db
    .select({ n: count() })
    .from(trainingJobs)
    .where(
      and(
        eq(trainingJobs.accountId, tenant.accountId),
        gte(trainingJobs.createdAt, dayStart),
        eq(trainingJobs.startedBy, STARTED_BY_CUSTOMER),
      ),
    );
  const decision = await deps.rateLimiter.consume([
    {
      key: `train:${tenant.accountId}:${dayIndex}`,
      limit,
      resetAt: (dayIndex + 1) * DAY_MS,
      floor: Number(row?.n ?? 0),
    },
  ]);
  if (!decision.allowed) {
    const state = decision.rules[0]!;
    const retryAfter = String(retryAfterSeconds(state, now));
    // The rate-limit headers describe the limit that refused, not the per-minute one the request passed.
    throw new AppError(
      "TRAINING_TOO_FREQUENT",
      `The plan allows ${limit} training runs per day; try again after midnight UTC`,
      {
        headers: {
          "Retry-After": retryAfter,
          "X-RateLimit-Limit": String(limit),
          "X-RateLimit-Remaining": "0",
          "X-RateLimit-Reset": retryAfter,
        },
      },
    );
  }
  deps.usageMeter?.record(tenant.accountId, { trainings: 1 });
}
