/**
 * drizzle's PGlite driver asks for dates, timestamps and intervals as text by handing a `parsers` option with
 * every query, and PGlite merges it into its own table of about 300 parsers keyed by type oid on every call:
 * copying that sparse, integer-keyed object costs about 0.4 ms, more than a whole simple query. The client is
 * opened with the same text parsers as its defaults instead, and the per-query option, identical for every
 * drizzle statement, is left out, so each query uses the client's table as it is.
 */
import type { PGlite, PGliteOptions, QueryOptions, Transaction } from "@electric-sql/pglite";

/** The types drizzle reads as text: timestamp, timestamptz, interval, date and their arrays, numeric[]. */
const TEXT_TYPE_OIDS = [1114, 1184, 1186, 1082, 1231, 1115, 1185, 1187, 1182] as const;

const asText = (value: string) => value;

/** The client's default parsers for those types: drizzle's, so leaving its per-query option out changes nothing. */
const textParsers: NonNullable<PGliteOptions["parsers"]> = Object.fromEntries(
  TEXT_TYPE_OIDS.map((oid) => [oid, asText]),
);

type Query = PGlite["query"];

/** `query` without the per-query parsers when they are exactly the client's defaults. */
function withoutDefaultParsers(query: Query): Query {
  return ((sql: string, params?: unknown[], options?: QueryOptions) => {
    if (options?.parsers === undefined || !sameAsDefaults(options.parsers))
      return query(sql, params, options);
    const { parsers: _, ...rest } = options;
    return query(sql, params, rest);
  }) as Query;
}

/**
 * A statement prepared with drizzle's `.prepare()` keeps its options object, checked once; other queries bring
 * a fresh object each time, and the check (nine calls of drizzle's identity functions) runs per query.
 */
const checked = new WeakMap<object, boolean>();

export function sameAsDefaults(parsers: NonNullable<QueryOptions["parsers"]>): boolean {
  let same = checked.get(parsers);
  if (same === undefined) {
    same = textOnly(parsers);
    checked.set(parsers, same);
  }
  return same;
}

function textOnly(parsers: NonNullable<QueryOptions["parsers"]>): boolean {
  const oids = Object.keys(parsers);
  if (oids.length !== TEXT_TYPE_OIDS.length) return false;
  for (const oid of TEXT_TYPE_OIDS) {
    const parse = parsers[oid];
    // drizzle's parsers are identity functions of its own; any other function would mean a different reading.
    if (parse === undefined || parse("2000-01-01") !== "2000-01-01") return false;
  }
  return true;
}

/**
 * Gives the client drizzle's text parsers as its own and makes its `query`, and the `query` of each
 * transaction it opens, skip the per-query merge. Called once the client is ready: PGlite sets its array
 * types' parsers while it starts, over any given to `create`.
 */
export function skipDefaultParserMerge(client: PGlite): void {
  Object.assign(client.parsers, textParsers);
  client.query = withoutDefaultParsers(client.query.bind(client));
  const transaction = client.transaction.bind(client);
  client.transaction = (<T>(callback: (tx: Transaction) => Promise<T>) =>
    transaction((tx) => {
      tx.query = withoutDefaultParsers(tx.query.bind(tx));
      return callback(tx);
    })) as PGlite["transaction"];
}
