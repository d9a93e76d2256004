/**
 * Paid subscriptions whose renewal date passed (plus a grace period for the provider's retries) lapse, so
 * the hot path only needs the account's subscription status, never its dates. Each sweep also retries
 * cancelling superseded subscriptions the provider could not cancel at the time (see supersede.ts).
 */

import { sql } from "drizzle-orm";
import type { Database } from "../../db/client";
import type { Logger } from "../../shared/logger";
import type { Identity } from "../auth/identity";
import type { PaymentProvider } from "./provider";
import { cancelSuperseded } from "./supersede";

const GRACE_MS = 3 * 86_400_000;
const SWEEP_EVERY_MS = 60_000;

type SweeperDeps = {
  readonly database: Database;
  readonly identity: Identity;
  readonly logger: Logger;
  readonly payments: PaymentProvider | undefined;
};

/**
 * Overdue accounts move to FREE with FREE's limits (never locked out of their data). The local test
 * provider sends no renewals, so its subscriptions end this way a month after authorisation.
 */
export async function lapseOverdueSubscriptions(deps: SweeperDeps, now = Date.now()): Promise<number[]> {
  const rows = await deps.database.rows<{ id: number }>(
    sql`update accounts set plan = 'FREE', subscription_status = 'lapsed', subscription_renews_at = null,
          updated_at = now()
        where subscription_status = 'active' and subscription_renews_at is not null
          and subscription_renews_at < ${new Date(now - GRACE_MS).toISOString()}::timestamptz
        returning id`,
  );
  const ids = rows.map((row) => Number(row.id));
  for (const id of ids) await deps.identity.accounts.changed(id);
  if (ids.length > 0) deps.logger.info("overdue subscriptions lapsed", { accounts: ids });
  return ids;
}

export class LapseSweeper {
  private timer: ReturnType<typeof setInterval> | undefined;

  constructor(private readonly deps: SweeperDeps) {}

  start(): void {
    this.timer ??= setInterval(() => {
      const { payments } = this.deps;
      lapseOverdueSubscriptions(this.deps)
        .then(() => (payments === undefined ? 0 : cancelSuperseded({ ...this.deps, payments })))
        .catch((error: unknown) => this.deps.logger.warn("subscription sweep failed", { error }));
    }, SWEEP_EVERY_MS);
    this.timer.unref?.();
  }

  stop(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
  }
}
