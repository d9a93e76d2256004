/**
 * Housekeeping for identity tables: revoked JWT ids are only needed until the token would have expired,
 * and verification tokens only until they expire or are used. Runs hourly; any process may run it.
 */
import { sql } from "drizzle-orm";
import type { Database } from "../../db/client";
import type { Logger } from "../../shared/logger";

const PURGE_MS = 3_600_000;

export class TokenPurge {
  private timer: ReturnType<typeof setInterval> | undefined;

  constructor(
    private readonly database: Database,
    private readonly logger: Logger,
  ) {}

  start(): void {
    this.timer ??= setInterval(() => void this.purge(), PURGE_MS);
    (this.timer as { unref?: () => void }).unref?.();
  }

  stop(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
  }

  async purge(): Promise<void> {
    try {
      await this.database.rows(sql`delete from revoked_tokens where expires_at < now()`);
      await this.database.rows(
        sql`delete from email_verification_tokens where expires_at < now() - interval '1 day'`,
      );
    } catch (error) {
      this.logger.warn("identity token purge failed", { error });
    }
  }
}
