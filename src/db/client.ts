/**
 * The system of record: real Postgres through postgres.js when DATABASE_URL is set, otherwise embedded
 * PGlite persisted under DATA_DIR. Both speak the same SQL and run the same migrations.
 */
import { PGlite } from "@electric-sql/pglite";
import { type SQL, sql } from "drizzle-orm";
import type { PgDatabase, PgQueryResultHKT } from "drizzle-orm/pg-core";
import { drizzle as drizzlePglite } from "drizzle-orm/pglite";
import { drizzle as drizzlePostgres } from "drizzle-orm/postgres-js";
import postgres from "postgres";
import { RemotePglite } from "./pglite-remote";
import * as schema from "./schema";

export type Schema = typeof schema;
export type Db = PgDatabase<PgQueryResultHKT, Schema>;
/** A transaction handle; it offers the same query API as Db. */
export type Tx = Parameters<Parameters<Db["transaction"]>[0]>[0];
export type DbOrTx = Db | Tx;

export type DatabaseKind = "pglite" | "postgres";

export interface Database {
  readonly kind: DatabaseKind;
  readonly db: Db;
  /** Runs a statement and returns its rows, whichever driver is underneath. */
  rows<T = Record<string, unknown>>(query: SQL, on?: DbOrTx): Promise<T[]>;
  /** This handle's id among the processes that share the database. */
  readonly instanceId: string;
  /**
   * Subscribes to a NOTIFY channel; returns the unsubscribe function. A `visible` subscription is made on a
   * connection of its own that names the channel and this handle, so other processes can list it
   * (`listeners`) and know whom to wait for.
   */
  listen(
    channel: string,
    onPayload: (payload: string) => void,
    options?: { visible?: boolean },
  ): Promise<() => Promise<void>>;
  /** The instance ids of the other handles with a visible subscription to the channel (none on PGlite). */
  listeners(channel: string): Promise<string[]>;
  notify(channel: string, payload: string): Promise<void>;
  /**
   * Runs a `copy (…) to stdout` statement and hands over its output as it arrives, in pieces that follow no
   * row boundaries; resolves once all of it has been handed over. Undefined on PGlite.
   */
  readonly copyOut: ((statement: string, onData: (piece: Uint8Array) => void) => Promise<void>) | undefined;
  /**
   * Settles at once the statements whose answers have already arrived from the embedded store's thread,
   * rather than when this thread's event loop next comes round to them; nothing to do on Postgres. Returns
   * how many it settled.
   */
  takeAnswers(): number;
  /**
   * Calls `handler` if the store is lost for good while open: the embedded store's thread ended (it failed,
   * or PGlite aborted), after which no statement can run in this process. Never on Postgres, whose lost
   * connections are made again (the health monitor reports the outage meanwhile), and never after `close`.
   */
  onLost(handler: (error: Error) => void): void;
  close(): Promise<void>;
}

export interface OpenDatabaseOptions {
  /** postgres:// URL; absent means PGlite. */
  url?: string | undefined;
  /** PGlite data directory, or "memory://" for a throw-away store. */
  dataDir?: string;
  /** Connections in the postgres.js pool. */
  maxConnections?: number;
  /** PGlite: a file its thread appends its time per kind of statement to (see store-timings.ts). */
  statementTimingsFile?: string | undefined;
}

export async function openDatabase(options: OpenDatabaseOptions): Promise<Database> {
  return options.url === undefined
    ? openPglite(options.dataDir ?? "memory://", options.statementTimingsFile)
    : openPostgres(options.url, options);
}

/** A process-unique id; short, as Postgres keeps only 63 bytes of a connection's application_name. */
function newInstanceId(): string {
  return `${process.pid.toString(36)}.${crypto.randomUUID().slice(0, 8)}`;
}

/** The application_name of a visible subscription's connection: `rs-listen:<channel>:<instance id>`. */
const visibleListenerName = (channel: string, instanceId: string) => `rs-listen:${channel}:${instanceId}`;

function rowsOf<T>(result: unknown): T[] {
  // postgres.js returns an array-like result; PGlite returns {rows}.
  if (Array.isArray(result)) return result as T[];
  return ((result as { rows?: T[] }).rows ?? []) as T[];
}

/**
 * The embedded database's page cache. It is resident from start-up whatever the data's size: Postgres's
 * default of 128 MB made an empty service 317 MiB, 64 MB makes it about 250 MiB. Pages beyond it are read
 * from the operating system's file cache; the shop mix ran as fast on the 20k-product tenant, and within
 * the noise (about 5% slower) on the 100k-product one.
 */
const EMBEDDED_SHARED_BUFFERS = "64MB";

/**
 * The embedded store creates each new 16 MB WAL segment by writing its last byte, not 16 MB of zeros.
 * PGlite has no background WAL writer: the statement whose records cross into a new segment creates it on
 * the database's thread, and zero-filling it there held that statement for 50–90 ms, every 2–3 s under the
 * shop mix (its answer logs write about 6 MB of WAL a second), and every statement queued behind it waited
 * as long. A file whose tail was never written reads back as zeros all the same, so recovery reads the same
 * bytes. What the zeros bought is disk space reserved up front: on a full disk the segment's creation fails
 * instead of a later write into it.
 */
const EMBEDDED_WAL_INIT_ZERO = "off";

/** The embedded store's server settings: PGlite's own, then the page cache and WAL settings above. */
export function embeddedStartParams(): string[] {
  return [
    ...PGlite.defaultStartParams,
    "-c",
    `shared_buffers=${EMBEDDED_SHARED_BUFFERS}`,
    "-c",
    `wal_init_zero=${EMBEDDED_WAL_INIT_ZERO}`,
  ];
}

async function openPglite(dataDir: string, statementTimingsFile: string | undefined): Promise<Database> {
  // The database runs on a thread of its own; this one posts statements and reads back rows.
  const client = await RemotePglite.open(dataDir, embeddedStartParams(), statementTimingsFile);
  const db = drizzlePglite({ client: client as unknown as PGlite, schema }) as unknown as Db;
  return {
    kind: "pglite",
    db,
    instanceId: newInstanceId(),
    rows: async <T>(query: SQL, on: DbOrTx = db) => rowsOf<T>(await on.execute(query)),
    listen: async (channel, onPayload) => {
      const unlisten = await client.listen(channel, onPayload);
      return async () => {
        if (!client.closed) await unlisten();
      };
    },
    // An embedded database belongs to this one process: there is nobody else to list.
    listeners: async () => [],
    notify: async (channel, payload) => {
      await db.execute(sql`select pg_notify(${channel}, ${payload})`);
    },
    copyOut: undefined,
    takeAnswers: () => client.takeAnswers(),
    onLost: (handler) => client.onLost(handler),
    close: () => client.close(),
  };
}

/** Statements with more parameters than this vary in length (IN lists, VALUES rows): not worth a plan each. */
const MAX_PREPARED_PARAMETERS = 64;

/**
 * drizzle runs every query through postgres.js's `unsafe` with `prepare: false`, and postgres.js then sends
 * each parameterised statement twice over: Parse/Describe (to learn the parameter types) and, a round trip
 * later, Bind/Execute, Postgres parsing and planning it every time. This view of the client prepares them
 * instead (one round trip and no parsing once a connection has seen the statement), except statements whose
 * text varies with their data (a long parameter list), which would fill each connection's statement cache.
 * Transactions and savepoints hand their callbacks the same view of their own client.
 */
function preparingStatements<C extends postgres.Sql | postgres.TransactionSql>(client: C): C {
  const unsafe = client.unsafe.bind(client) as (...args: unknown[]) => unknown;
  const preparingUnsafe = (...args: unknown[]) => {
    const [query, parameters, options] = args;
    const prepared =
      Array.isArray(parameters) && parameters.length > 0 && parameters.length <= MAX_PREPARED_PARAMETERS;
    return prepared
      ? unsafe(query, parameters, { ...(options as object | undefined), prepare: true })
      : unsafe(...args);
  };
  /** `begin` and `savepoint`: the transaction's own client reaches the callback through this view too. */
  const opening =
    (open: (...args: unknown[]) => Promise<unknown>) =>
    (...args: unknown[]) => {
      const body = args.pop() as (inner: postgres.TransactionSql) => unknown;
      return open(...args, (inner: postgres.TransactionSql) => body(preparingStatements(inner)));
    };
  const begin = "begin" in client ? opening(client.begin.bind(client) as never) : undefined;
  const savepoint = "savepoint" in client ? opening(client.savepoint.bind(client) as never) : undefined;
  return new Proxy(client, {
    get(target, property, receiver) {
      if (property === "unsafe") return preparingUnsafe;
      if (property === "begin" && begin !== undefined) return begin;
      if (property === "savepoint" && savepoint !== undefined) return savepoint;
      return Reflect.get(target, property, receiver);
    },
  });
}

/**
 * Resumes the socket of the connection a finished copy ran on. postgres.js pauses that socket whenever the
 * copy stream's buffer passes its high-water mark, and resumes it only when the stream asks for more (its
 * `_read`). When the whole answer arrives in one socket read (a small model's 91 KB artifact did, on a cold
 * process's busy event loop), the stream is pushed past the mark and ended before anyone reads it, so it
 * never asks: the socket stays paused, the connection goes back to the pool, and the next statement given
 * it never reads its answer. A cold process hung so on its first attribute filter; Postgres showed that
 * statement `active` on ClientRead when it was the connection's first of its kind (postgres.js sends its
 * Bind only once it has read the Describe answer), `idle` otherwise. postgres.js 3.4.9, its latest, has the
 * bug (porsager/postgres#499; the fix proposed in #1016 resumes the socket at CopyDone, as this does from
 * outside). Asking once more after the end resumes it; on a flowing socket it does nothing, and a
 * connection closed since has no socket to resume.
 */
function resumeCopyConnection(stream: NodeJS.ReadableStream): void {
  try {
    (stream as unknown as { _read(size: number): void })._read(0);
  } catch {
    // The connection closed meanwhile: the next statement gets a new one.
  }
}

const CONNECT_TIMEOUT_SECONDS = 5;

async function openPostgres(url: string, options: OpenDatabaseOptions): Promise<Database> {
  const client = postgres(url, {
    max: options.maxConnections ?? 10,
    onnotice: () => {},
    // postgres.js waits 30 s for a connection by default; a request should learn much sooner that the
    // database is unreachable (it then answers 503 with Retry-After).
    connect_timeout: CONNECT_TIMEOUT_SECONDS,
    // bigint ids are returned as numbers by drizzle's column mapping; keep the driver's defaults otherwise.
    connection: { application_name: "recommendation-service" },
  });
  const db = drizzlePostgres({ client: preparingStatements(client), schema }) as unknown as Db;
  const instanceId = newInstanceId();
  /** One connection per visibly subscribed channel, named after it; closed with its last subscription. */
  const visible = new Map<string, { client: postgres.Sql; subscriptions: number }>();
  const subscribeVisibly = async (channel: string, onPayload: (payload: string) => void) => {
    let entry = visible.get(channel);
    if (entry === undefined) {
      entry = {
        client: postgres(url, {
          max: 1,
          onnotice: () => {},
          connection: { application_name: visibleListenerName(channel, instanceId) },
        }),
        subscriptions: 0,
      };
      visible.set(channel, entry);
    }
    const owner = entry;
    owner.subscriptions++;
    const subscription = await owner.client.listen(channel, onPayload);
    return async () => {
      await subscription.unlisten();
      if (--owner.subscriptions === 0 && visible.get(channel) === owner) {
        visible.delete(channel);
        await owner.client.end({ timeout: 5 });
      }
    };
  };
  return {
    kind: "postgres",
    db,
    instanceId,
    rows: async <T>(query: SQL, on: DbOrTx = db) => rowsOf<T>(await on.execute(query)),
    listen: async (channel, onPayload, options) => {
      if (options?.visible === true) return subscribeVisibly(channel, onPayload);
      const subscription = await client.listen(channel, onPayload);
      return async () => {
        await subscription.unlisten();
      };
    },
    listeners: async (channel) => {
      const prefix = visibleListenerName(channel, "");
      const rows = await client<{ name: string }[]>`
        select distinct application_name as name from pg_stat_activity
        where datname = current_database() and left(application_name, ${prefix.length}) = ${prefix}`;
      return rows.map((row) => row.name.slice(prefix.length)).filter((id) => id !== instanceId);
    },
    notify: async (channel, payload) => {
      await client.notify(channel, payload);
    },
    copyOut: async (statement, onData) => {
      const stream = await client.unsafe(statement).readable();
      // Listeners rather than async iteration: iterating postgres.js's copy stream under Bun left the next
      // copy on the pool waiting (seen with three reads in a row). A piece the caller refuses does not stop
      // the stream (a destroyed copy stream leaves its connection paused): the rest is drained and dropped.
      let refused: unknown;
      try {
        await new Promise<void>((resolve, reject) => {
          stream.on("data", (piece: Uint8Array) => {
            if (refused !== undefined) return;
            try {
              onData(piece);
            } catch (error) {
              refused = error ?? new Error("copy output refused");
            }
          });
          stream.once("end", resolve);
          stream.once("error", reject);
        });
      } finally {
        resumeCopyConnection(stream);
      }
      if (refused !== undefined) throw refused;
    },
    // postgres.js reads its sockets on this thread's event loop: there is nothing to take early.
    takeAnswers: () => 0,
    // A lost connection is made again with the next statement: the store is never lost for good.
    onLost: () => {},
    close: async () => {
      const dedicated = [...visible.values()].map((entry) => entry.client.end({ timeout: 5 }));
      visible.clear();
      await Promise.all([client.end({ timeout: 5 }), ...dedicated]);
    },
  };
}
