/**
 * Plan enforcement on the hot path: per-minute request limit, monthly request quota, the bulk-ingestion
 * rate and the lapsed-subscription rule, decided from the account row the auth plugin already loaded and
 * from in-memory/Redis counters. The only SQL is one read per account per month and process, to seed the
 * monthly counter with what earlier processes already counted.
 */
import { sql } from "drizzle-orm";
import type { Database } from "../../db/client";
import type { TenantContext, TenantGuard } from "../../http/tenant";
import { AppError, type ErrorCode } from "../../shared/errors";
import type { Logger } from "../../shared/logger";
import {
  type RateDecision,
  type RateLimiter,
  type RateRule,
  type RuleState,
  retryAfterSeconds,
} from "../../shared/rate-limit";
import type { UsageMeter } from "../../shared/usage-meter";
import { bulkRateOf, effectivePlan, subscriptionLapsed } from "./plan-of";
import type { PlanTableType } from "./schemas";

const MINUTE_MS = 60_000;
const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;

/**
 * Account management: keeps working on a lapsed subscription and past the monthly quota, so the owner can see
 * usage, manage keys, pay again and sign out. It is not counted as API use.
 */
export const ACCOUNT_MANAGEMENT =
  /^\/api\/v1\/(billing|accounts|usage|plans|system-users|auth|api-keys)(\/|$)/;
/** What a shop's traffic is made of: counted and limited alike whoever calls, a key or a signed-in user. */
const SHOP_TRAFFIC = /^\/api\/v1\/(recommendations|interactions|ingestion)(\/|$)/;
const BULK_INGESTION = /^\/api\/v1\/ingestion\/batch\/?$/;
/**
 * A signed-in user's other requests (the dashboard's pages, which poll while a job runs) have a per-minute
 * window of their own, at least this wide: browsing the dashboard neither uses up the shop's per-minute
 * budget nor is refused because the shop's traffic did, and it is not counted against the monthly quota.
 */
export const SESSION_REQUESTS_PER_MINUTE = 300;

export interface MonthWindow {
  /** YYYY-MM-01 */
  readonly startDay: string;
  readonly start: number;
  readonly end: number;
}

let currentMonth: MonthWindow = { startDay: "", start: 0, end: 0 };

/** The UTC calendar month containing `now` (called per request: the current month's window is reused). */
export function monthWindow(now: number): MonthWindow {
  if (now >= currentMonth.start && now < currentMonth.end) return currentMonth;
  const date = new Date(now);
  const start = Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1);
  const end = Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1);
  const window = { startDay: new Date(start).toISOString().slice(0, 10), start, end };
  currentMonth = window;
  return window;
}

interface EnforcerDeps {
  readonly plans: Readonly<PlanTableType>;
  readonly database: Database;
  readonly logger: Logger;
  readonly rateLimiter: RateLimiter;
  readonly usageMeter: UsageMeter;
}

export class PlanEnforcer {
  /** Replaceable in tests so a window boundary never falls in the middle of a check. */
  clock: () => number = Date.now;
  private readonly monthBaselines = new Map<
    number,
    { month: string; requests: Promise<number>; known?: number }
  >();

  constructor(private readonly deps: EnforcerDeps) {}

  /**
   * The guard the auth plugin runs after authenticating every request. Synchronous once the account's month
   * baseline is known and the limiter decides in memory (the common case); otherwise it returns a promise.
   */
  readonly guard: TenantGuard = (tenant, request) => {
    const lapsed = subscriptionLapsed(this.deps, tenant.account);
    if (lapsed && !ACCOUNT_MANAGEMENT.test(request.route)) {
      throw new AppError(
        "SUBSCRIPTION_INACTIVE",
        `The ${tenant.account.plan} subscription is not active: renew it through /api/v1/billing to use the API`,
      );
    }
    const plan = effectivePlan(this.deps, tenant.account);
    const now = this.clock();
    const month = monthWindow(now);
    const minute = Math.floor(now / MINUTE_MS);
    const shopTraffic = SHOP_TRAFFIC.test(request.route);
    const actor = tenant.actor;
    const session = actor.type === "user" && !shopTraffic;
    const metered = !session && !ACCOUNT_MANAGEMENT.test(request.route);
    // A publishable key is public: whoever reads the shop's pages can send its requests. They have a minute
    // of their own, so that no one can use up the minute of the shop's backend (its secret keys) with it.
    const browser = actor.type === "apiKey" && actor.keyKind === "publishable";
    const rules: RateRule[] = [
      {
        key: `${session ? "srpm" : browser ? "prpm" : "rpm"}:${tenant.accountId}:${minute}`,
        limit: session
          ? Math.max(plan.limits.requestsPerMinute, SESSION_REQUESTS_PER_MINUTE)
          : plan.limits.requestsPerMinute,
        resetAt: (minute + 1) * MINUTE_MS,
      },
    ];
    const codes: ErrorCode[] = ["RATE_LIMITED"];
    const bulk = request.method === "POST" && BULK_INGESTION.test(request.route);
    if (bulk) {
      const rate = bulkRateOf(plan);
      for (const [name, size, limit] of [
        ["m", MINUTE_MS, rate.perMinute],
        ["h", HOUR_MS, rate.perHour],
        ["d", DAY_MS, rate.perDay],
      ] as const) {
        const index = Math.floor(now / size);
        rules.push({ key: `bulk${name}:${tenant.accountId}:${index}`, limit, resetAt: (index + 1) * size });
        codes.push("RATE_LIMITED");
      }
    }
    const decide = (floor: number | undefined): void | Promise<void> => {
      if (floor !== undefined) {
        rules.push({
          key: `mreq:${tenant.accountId}:${month.startDay}`,
          limit: plan.limits.monthlyRequests,
          resetAt: month.end,
          floor,
        });
        codes.push("PLAN_LIMIT_EXCEEDED");
      }
      const count = () => {
        if (metered) this.deps.usageMeter.record(tenant.accountId, { requests: 1 });
      };
      const apply = (decision: RateDecision) => {
        const shown = headlineRule(decision.rules, bulk);
        if (!decision.allowed) {
          const blocking = decision.rules[decision.blockedBy]!;
          const code = codes[decision.blockedBy]!;
          throw new AppError(code, refusalMessage(code, blocking, bulk), {
            headers: {
              ...rateLimitHeaders(blocking, now),
              "Retry-After": String(retryAfterSeconds(blocking, now)),
            },
          });
        }
        Object.assign(request.set.headers, rateLimitHeaders(shown, now));
        count();
      };
      const unavailable = (error: unknown) => {
        // A counter store outage must not take the API down with it: admit and say so in the log.
        this.deps.logger.error("rate limiter unavailable; request admitted unchecked", { error });
        count();
      };
      const limiter = this.deps.rateLimiter;
      if (limiter.consumeNow === undefined) return limiter.consume(rules).then(apply, unavailable);
      let decision: RateDecision;
      try {
        decision = limiter.consumeNow(rules);
      } catch (error) {
        return unavailable(error);
      }
      return apply(decision);
    };
    if (!metered) return decide(undefined);
    const baseline = this.monthBaseline(tenant.accountId, month);
    return typeof baseline === "number" ? decide(baseline) : baseline.then(decide);
  };

  /**
   * Requests already counted this month in usage_daily, read once per account and month: the number once
   * read, a promise of it before.
   */
  private monthBaseline(accountId: number, month: MonthWindow): number | Promise<number> {
    const cached = this.monthBaselines.get(accountId);
    if (cached !== undefined && cached.month === month.startDay) return cached.known ?? cached.requests;
    const entry: { month: string; requests: Promise<number>; known?: number } = {
      month: month.startDay,
      requests: Promise.resolve(0),
    };
    entry.requests = this.deps.database
      .rows<{ total: number | string | null }>(
        sql`select coalesce(sum(requests), 0) as total from usage_daily
            where account_id = ${accountId} and day >= ${month.startDay}::date`,
      )
      .then((rows) => {
        entry.known = Number(rows[0]?.total ?? 0);
        return entry.known;
      })
      .catch((error: unknown) => {
        this.monthBaselines.delete(accountId);
        this.deps.logger.warn("could not read the month's usage", { error, accountId });
        return 0;
      });
    if (this.monthBaselines.size > 100_000) this.monthBaselines.clear();
    this.monthBaselines.set(accountId, entry);
    return entry.requests;
  }

  /** Forgets cached baselines (tests, or after usage rows were changed by hand). */
  forgetBaselines(): void {
    this.monthBaselines.clear();
  }

  /** Days' and months' windows relative to the enforcer's clock, for the other limits. */
  now(): number {
    return this.clock();
  }
}

/** Per-minute limit normally; on the bulk route the bulk window closest to running out. */
function headlineRule(rules: readonly RuleState[], bulk: boolean): RuleState {
  if (!bulk) return rules[0]!;
  const bulkRules = rules.slice(1, 4);
  return bulkRules.reduce((a, b) => (b.remaining < a.remaining ? b : a));
}

function rateLimitHeaders(state: RuleState, now: number): Record<string, string> {
  return {
    "X-RateLimit-Limit": String(state.limit),
    "X-RateLimit-Remaining": String(state.remaining),
    "X-RateLimit-Reset": String(retryAfterSeconds(state, now)),
  };
}

const BULK_WINDOW_NAMES: Record<string, string> = { bulkm: "minute", bulkh: "hour", bulkd: "day" };

function refusalMessage(code: ErrorCode, state: RuleState, bulk: boolean): string {
  if (code === "PLAN_LIMIT_EXCEEDED") {
    return `Monthly request quota of ${state.limit} reached; upgrade the plan or wait for the next month`;
  }
  if (bulk && !state.key.includes("rpm:")) {
    const window = BULK_WINDOW_NAMES[state.key.slice(0, 5)] ?? "window";
    return `Bulk-ingestion limit of ${state.limit} requests per ${window} exceeded`;
  }
  return `Rate limit of ${state.limit} requests per minute exceeded`;
}

export type { TenantContext };
