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
import { pgliteAssets } from "./pglite-assets";
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
  /** Subscribes to a NOTIFY channel; returns the unsubscribe function. */
  listen(channel: string, onPayload: (payload: string) => void): Promise<() => Promise<void>>;
  notify(channel: string, payload: string): Promise<void>;
  close(): Promise<void>;
}

export interface OpenDatabaseOptions {
  /** postgres:// URL; absent means PGlite. */
  url?: string | undefined;
  /** PGlite data directory, or "memory://" for a throw-away store. */
  dataDir?: string;
  /** Connections in the postgres.js pool. */
  maxConnections?: number;
}

export async function openDatabase(options: OpenDatabaseOptions): Promise<Database> {
  return options.url === undefined
    ? openPglite(options.dataDir ?? "memory://")
    : openPostgres(options.url, options);
}

function rowsOf<T>(result: unknown): T[] {
  // postgres.js returns an array-like result; PGlite returns {rows}.
  if (Array.isArray(result)) return result as T[];
  return ((result as { rows?: T[] }).rows ?? []) as T[];
}

async function openPglite(dataDir: string): Promise<Database> {
  const client = await PGlite.create(dataDir, await pgliteAssets());
  const db = drizzlePglite({ client, schema }) as unknown as Db;
  return {
    kind: "pglite",
    db,
    rows: async <T>(query: SQL, on: DbOrTx = db) => rowsOf<T>(await on.execute(query)),
    listen: async (channel, onPayload) => {
      const unlisten = await client.listen(channel, onPayload);
      return async () => {
        if (!client.closed) await unlisten();
      };
    },
    notify: async (channel, payload) => {
      await db.execute(sql`select pg_notify(${channel}, ${payload})`);
    },
    close: async () => {
      if (!client.closed) await client.close();
    },
  };
}

async function openPostgres(url: string, options: OpenDatabaseOptions): Promise<Database> {
  const client = postgres(url, {
    max: options.maxConnections ?? 10,
    onnotice: () => {},
    // bigint ids are returned as numbers by drizzle's column mapping; keep the driver's defaults otherwise.
    connection: { application_name: "recommendation-service" },
  });
  const db = drizzlePostgres({ client, schema }) as unknown as Db;
  return {
    kind: "postgres",
    db,
    rows: async <T>(query: SQL, on: DbOrTx = db) => rowsOf<T>(await on.execute(query)),
    listen: async (channel, onPayload) => {
      const subscription = await client.listen(channel, onPayload);
      return async () => {
        await subscription.unlisten();
      };
    },
    notify: async (channel, payload) => {
      await client.notify(channel, payload);
    },
    close: async () => {
      await client.end({ timeout: 5 });
    },
  };
}
