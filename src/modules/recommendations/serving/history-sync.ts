/**
 * Cross-process freshness of the history cache: every interaction recorded in this process is announced on
 * a NOTIFY channel (coalesced per tick: one notification per batch of users, one per account when a bulk
 * chunk touches many), and announcements from other processes drop the named users' cached histories here.
 * So "an interaction recorded a moment ago changes the next answer" holds whichever process answers; the
 * cache's TTL stays as the backstop for a notification lost with a dropped connection. An embedded store
 * belongs to one process, which has nobody to tell: there nothing is announced (a NOTIFY on PGlite costs about
 * a millisecond of the database's thread), and announcements are still received.
 */
import type { Database } from "../../../db/client";
import type { Logger } from "../../../shared/logger";
import type { HistoryCache } from "./history-cache";

export const HISTORY_CHANNEL = "recommendation_history";

/** Postgres caps a payload at 8000 bytes; past this many users one account-wide notice is sent instead. */
const MAX_USERS_PER_NOTICE = 100;
const MAX_PAYLOAD_CHARS = 7000;

interface Notice {
  /** Sending process, so a process skips its own notices (its cache was dropped synchronously). */
  o: string;
  a: number;
  /** External user ids; absent: every user of the account. */
  u?: string[];
}

export class HistorySync {
  private readonly origin = crypto.randomUUID();
  private pending = new Map<number, Set<string>>();
  private scheduled = false;
  private unlisten: (() => Promise<void>) | undefined;

  constructor(
    private readonly database: Pick<Database, "listen" | "notify">,
    private readonly histories: HistoryCache,
    private readonly logger: Logger,
    /** False where no other process shares the database (the embedded store). */
    private readonly announce = true,
  ) {}

  async start(): Promise<void> {
    this.unlisten = await this.database.listen(HISTORY_CHANNEL, (payload) => this.receive(payload));
  }

  async stop(): Promise<void> {
    await this.flush();
    await this.unlisten?.().catch(() => {});
    this.unlisten = undefined;
  }

  /** Queues an announcement; everything queued in the same tick goes out together. */
  publish(accountId: number, externalUserId: string): void {
    if (!this.announce) return;
    let users = this.pending.get(accountId);
    if (users === undefined) {
      users = new Set();
      this.pending.set(accountId, users);
    }
    users.add(externalUserId);
    if (!this.scheduled) {
      this.scheduled = true;
      queueMicrotask(() => void this.flush());
    }
  }

  private async flush(): Promise<void> {
    this.scheduled = false;
    const pending = this.pending;
    this.pending = new Map();
    const sends: Promise<void>[] = [];
    for (const [accountId, users] of pending) {
      for (const notice of notices(this.origin, accountId, [...users])) {
        sends.push(
          this.database.notify(HISTORY_CHANNEL, JSON.stringify(notice)).catch((error: unknown) => {
            this.logger.warn("history notification failed", { accountId, error });
          }),
        );
      }
    }
    await Promise.all(sends);
  }

  private receive(payload: string): void {
    let notice: Partial<Notice>;
    try {
      notice = JSON.parse(payload) as Partial<Notice>;
    } catch {
      return;
    }
    if (notice.o === this.origin || typeof notice.a !== "number") return;
    if (!Array.isArray(notice.u)) this.histories.invalidateAccount(notice.a);
    else for (const user of notice.u) if (typeof user === "string") this.histories.invalidate(notice.a, user);
  }
}

function notices(origin: string, accountId: number, users: string[]): Notice[] {
  if (users.length > MAX_USERS_PER_NOTICE) return [{ o: origin, a: accountId }];
  const out: Notice[] = [];
  let batch: string[] = [];
  let chars = 0;
  for (const user of users) {
    if (user.length > MAX_PAYLOAD_CHARS / 2) return [{ o: origin, a: accountId }];
    if (chars + user.length + 4 > MAX_PAYLOAD_CHARS && batch.length > 0) {
      out.push({ o: origin, a: accountId, u: batch });
      batch = [];
      chars = 0;
    }
    batch.push(user);
    chars += user.length + 4;
  }
  if (batch.length > 0) out.push({ o: origin, a: accountId, u: batch });
  return out;
}
