/**
 * The account facts every authenticated request needs (active flag, plan, subscription, e-mail
 * verification of its users), kept in memory for a few seconds. Writers call `changed(accountId)` after
 * committing: it evicts here at once and, through NOTIFY, in every other process; the short TTL covers any
 * writer that forgets.
 */
import { sql } from "drizzle-orm";
import type { Database } from "../../db/client";
import type { Logger } from "../../shared/logger";

export interface CachedAccount {
  readonly id: number;
  readonly name: string;
  readonly plan: string;
  readonly isActive: boolean;
  readonly subscriptionStatus: string;
  readonly createdAt: Date;
  /** True when a user of the account has verified its e-mail address. */
  readonly emailVerified: boolean;
  /** Creation time of the account's first user: the e-mail grace period counts from it. */
  readonly firstUserCreatedAt: Date | null;
}

interface Row {
  id: number;
  name: string;
  plan: string;
  is_active: boolean;
  subscription_status: string;
  created_at: Date | string;
  email_verified: boolean | null;
  first_user_created_at: Date | string | null;
}

export const ACCOUNT_CHANNEL = "account_changed";
const TTL_MS = 5_000;
const MAX_ENTRIES = 50_000;

export class AccountCache {
  private readonly entries = new Map<number, { account: CachedAccount; loadedAt: number }>();
  private generation = 0;
  private unlisten: (() => Promise<void>) | undefined;

  constructor(
    private readonly database: Database,
    private readonly logger: Logger,
  ) {}

  async start(): Promise<void> {
    this.unlisten = await this.database.listen(ACCOUNT_CHANNEL, (payload) => this.evict(Number(payload)));
  }

  async stop(): Promise<void> {
    await this.unlisten?.();
    this.unlisten = undefined;
    this.entries.clear();
  }

  /** The account when it is cached and fresh, without waiting: the common case of every authenticated request. */
  cached(accountId: number): CachedAccount | undefined {
    const cached = this.entries.get(accountId);
    return cached !== undefined && Date.now() - cached.loadedAt < TTL_MS ? cached.account : undefined;
  }

  async get(accountId: number): Promise<CachedAccount | undefined> {
    const cached = this.cached(accountId);
    if (cached !== undefined) return cached;
    const generation = this.generation;
    const [row] = await this.database.rows<Row>(
      sql`select a.id, a.name, a.plan, a.is_active, a.subscription_status, a.created_at,
            bool_or(u.email_verified_at is not null) as email_verified,
            min(u.created_at) as first_user_created_at
          from accounts a left join system_users u on u.account_id = a.id
          where a.id = ${accountId}
          group by a.id`,
    );
    if (row === undefined) return undefined;
    const account: CachedAccount = {
      id: Number(row.id),
      name: row.name,
      plan: row.plan,
      isActive: row.is_active,
      subscriptionStatus: row.subscription_status,
      createdAt: new Date(row.created_at),
      emailVerified: row.email_verified === true,
      firstUserCreatedAt: row.first_user_created_at === null ? null : new Date(row.first_user_created_at),
    };
    if (generation === this.generation) {
      if (this.entries.size >= MAX_ENTRIES) this.entries.clear();
      this.entries.set(accountId, { account, loadedAt: Date.now() });
    }
    return account;
  }

  /** Call after committing any change to an account row or to its users' verification state. */
  async changed(accountId: number): Promise<void> {
    this.evict(accountId);
    try {
      await this.database.notify(ACCOUNT_CHANNEL, String(accountId));
    } catch (error) {
      this.logger.error("could not announce account change", { error });
    }
  }

  private evict(accountId: number): void {
    this.generation++;
    this.entries.delete(accountId);
  }
}
