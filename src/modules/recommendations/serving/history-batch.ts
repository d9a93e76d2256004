/**
 * Reads of single users' histories asked for in the same turn of the event loop, or while the previous such
 * read was under way, made as one statement (at most MAX_USERS users each), for the embedded store: there a
 * read of one user costs 5-9 ms of the database's thread, of which a user's share of a 32-user statement is
 * 0.5-0.9 ms (bench tenant, 30 interactions a user). A user of the bulk read (history-preload.ts) needs
 * none; this reads the others (not yet in it, or with news since) while it is under way and after.
 *
 * Each caller gets what a read of its user made when the statement runs would have said: the statement
 * starts after every caller asked.
 */
import { sql } from "drizzle-orm";
import type { Database } from "../../../db/client";
import {
  INTERACTION_LINE,
  materialise,
  type PreloadedHistory,
  parseChunk,
  storedUser,
  type UserRow,
} from "./history-lines";

/** Users per statement: its thread time stays in the few milliseconds of a few single reads. */
const MAX_USERS = 64;

interface Waiter {
  nameOf: (productId: number) => string | undefined;
  /** The history; null: no such user in the account; undefined: read the user alone (a product unnamed). */
  resolve: (history: PreloadedHistory | null | undefined) => void;
  reject: (error: unknown) => void;
}

export class HistoryBatch {
  private pending = new Map<number, Map<string, Waiter[]>>();
  private scheduled = false;
  /** A flush's statements are under way. */
  private reading = false;

  constructor(
    private readonly database: Database,
    private readonly historyLength: number,
  ) {}

  /**
   * The user's history as read with the others asked for in this turn. Null: the account has no such
   * user. Undefined: a product the model does not know, or a value the bulk format cannot carry; read the
   * user alone.
   */
  read(
    accountId: number,
    externalUserId: string,
    nameOf: (productId: number) => string | undefined,
  ): Promise<PreloadedHistory | null | undefined> {
    return new Promise((resolve, reject) => {
      let users = this.pending.get(accountId);
      if (users === undefined) {
        users = new Map();
        this.pending.set(accountId, users);
      }
      const waiter: Waiter = { nameOf, resolve, reject };
      const waiting = users.get(externalUserId);
      if (waiting === undefined) users.set(externalUserId, [waiter]);
      else waiting.push(waiter);
      this.schedule();
    });
  }

  /**
   * After the I/O of this turn, so the requests that arrived with this one ask for their users first; and
   * not while a read is under way: the database runs statements one at a time, so a second statement would
   * only wait behind the first, and the users asked for meanwhile go together in one statement after it.
   */
  private schedule(): void {
    if (this.scheduled || this.reading) return;
    this.scheduled = true;
    setImmediate(() => void this.flush());
  }

  private async flush(): Promise<void> {
    this.scheduled = false;
    const pending = this.pending;
    this.pending = new Map();
    this.reading = true;
    try {
      await this.readAll(pending);
    } finally {
      this.reading = false;
      if (this.pending.size > 0) this.schedule();
    }
  }

  private async readAll(pending: Map<number, Map<string, Waiter[]>>): Promise<void> {
    for (const [accountId, users] of pending) {
      const ids = [...users.keys()];
      for (let k = 0; k < ids.length; k += MAX_USERS) {
        const part = ids.slice(k, k + MAX_USERS);
        try {
          const found = await readUsers(this.database, accountId, part);
          for (const id of part) {
            const user = found === null ? undefined : found.get(id);
            for (const waiter of users.get(id)!) {
              if (found === null) waiter.resolve(undefined);
              else if (user === undefined) waiter.resolve(null);
              else waiter.resolve(materialise(user, waiter.nameOf, this.historyLength));
            }
          }
        } catch (error) {
          for (const id of part) for (const waiter of users.get(id)!) waiter.reject(error);
        }
      }
    }
  }
}

/** The users found among `externalUserIds` with their interactions; null: a line the format cannot carry. */
async function readUsers(database: Database, accountId: number, externalUserIds: readonly string[]) {
  const rows = await database.rows<UserRow & { lines: string | null }>(sql`
    select u.id, u.external_id, u.preferred_categories, u.price_range_min, u.price_range_max,
           (select string_agg(${INTERACTION_LINE}, E'\n' order by i.occurred_at desc, i.id desc)
              from interactions i
             where i.account_id = ${accountId} and i.end_user_id = u.id) as lines
    from end_users u
    where u.account_id = ${accountId}
      and u.external_id in (${sql.join(
        externalUserIds.map((id) => sql`${id}`),
        sql`, `,
      )})`);
  const found = new Map<string, ReturnType<typeof storedUser>>();
  for (const row of rows) {
    const chunk = parseChunk(row.lines ? row.lines.split("\n") : []);
    if (chunk === null) return null;
    found.set(row.external_id, storedUser(row, chunk));
  }
  return found;
}
