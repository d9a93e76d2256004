/**
 * PGlite runs a parameterised query as six separate calls into its WebAssembly module (Parse, Describe the
 * statement, Bind, Describe the portal, Execute, Sync), and Postgres parses and plans the text every time:
 * about 140 µs for `select $1`, 310 µs for a one-row insert, all of it on the database's thread
 * (pglite-worker.ts).
 * Each statement text is prepared once under a name of its own instead, and each query afterwards is one call
 * holding Bind, Describe, Execute and Sync: about 30 µs and 80 µs for the same two. Results, errors, notices
 * and notifications go through the same parsing as PGlite's own `query`.
 *
 * Left to PGlite's own path: queries with options this does not reproduce (blobs, parameter types,
 * serializers), and statements with a long parameter list, whose text varies with their data (IN lists,
 * multi-row VALUES) and would fill the statement cache.
 */
import type { PGlite, QueryOptions, Results, Transaction } from "@electric-sql/pglite";
import { parse, protocol } from "@electric-sql/pglite";

/** Statements with more parameters than this are left to PGlite's own path: their text varies with their data. */
const MAX_PREPARED_PARAMETERS = 64;
/**
 * Prepared statements kept per client; the least recently used is closed past this. Each holds its plans in
 * the database's memory, about 20 KB for a join with a subquery, so this bounds them to a few megabytes.
 */
const MAX_STATEMENTS = 256;

/** SQLSTATEs of a prepared statement that no longer fits the schema: prepared afresh on the next call. */
const STALE_STATEMENT_CODES = new Set([
  "0A000", // cached plan must not change result type (a table's columns changed)
  "26000", // invalid_sql_statement_name: the statement is gone
]);

type Query = PGlite["query"];

interface Prepared {
  readonly name: string;
  /** The parameter types Postgres inferred, to serialise values as PGlite's own path does. */
  readonly parameterTypes: readonly number[];
}

interface DatabaseErrorLike {
  code?: string;
  query?: string;
  params?: unknown[];
  queryOptions?: QueryOptions;
}

const serialize = protocol.serialize;
const DESCRIBE_PORTAL = serialize.describe({ type: "P" });
const EXECUTE = serialize.execute({});
const SYNC = serialize.sync();

function concat(parts: readonly Uint8Array[]): Uint8Array {
  let length = 0;
  for (const part of parts) length += part.length;
  const joined = new Uint8Array(length);
  let at = 0;
  for (const part of parts) {
    joined.set(part, at);
    at += part.length;
  }
  return joined;
}

/** Whether a query can take the prepared path: only options `parseResults` reads are honoured there. */
function preparable(params: unknown[] | undefined, options: QueryOptions | undefined): boolean {
  if ((params?.length ?? 0) > MAX_PREPARED_PARAMETERS) return false;
  if (options === undefined) return true;
  return (
    options.blob === undefined &&
    options.paramTypes === undefined &&
    options.serializers === undefined &&
    options.onNotice === undefined
  );
}

/** The prepared statements of one client, shared by its own queries and its transactions' queries. */
class StatementCache {
  readonly #client: PGlite;
  readonly #statements = new Map<string, Prepared>();
  /** Statements evicted from the cache, closed with the next preparation. */
  #toClose: string[] = [];
  #counter = 0;

  constructor(client: PGlite) {
    this.#client = client;
  }

  /** Runs the query through its prepared statement; the caller holds PGlite's query lock. */
  async run<T>(text: string, params: unknown[], options: QueryOptions | undefined): Promise<Results<T>> {
    let messages: Awaited<ReturnType<PGlite["execProtocolStream"]>>;
    try {
      const statement = this.#used(text) ?? (await this.#prepare(text));
      const values = params.map((param, i) => {
        if (param === null || param === undefined) return null;
        const serializeParam = this.#client.serializers[statement.parameterTypes[i] ?? 0];
        return serializeParam ? serializeParam(param) : String(param);
      });
      messages = await this.#client.execProtocolStream(
        concat([serialize.bind({ statement: statement.name, values }), DESCRIBE_PORTAL, EXECUTE, SYNC]),
        { syncToFs: false },
      );
    } catch (error) {
      if (STALE_STATEMENT_CODES.has((error as DatabaseErrorLike).code ?? "")) this.forget(text);
      throw describeFailure(error, text, params, options);
    }
    return parse.parseResults(messages, this.#client.parsers, options)[0] as Results<T>;
  }

  /** The statement prepared for the text, now the most recently used. */
  #used(text: string): Prepared | undefined {
    const statement = this.#statements.get(text);
    if (statement !== undefined) {
      this.#statements.delete(text);
      this.#statements.set(text, statement);
    }
    return statement;
  }

  forget(text: string): void {
    const statement = this.#statements.get(text);
    if (statement === undefined) return;
    this.#statements.delete(text);
    this.#toClose.push(statement.name);
  }

  async #prepare(text: string): Promise<Prepared> {
    if (this.#statements.size >= MAX_STATEMENTS) {
      const oldest = this.#statements.keys().next().value;
      if (oldest !== undefined) this.forget(oldest);
    }
    const name = `rs_${++this.#counter}`;
    const closing = this.#toClose.map((evicted) => serialize.close({ type: "S", name: evicted }));
    this.#toClose = [];
    const messages = await this.#client.execProtocolStream(
      concat([...closing, serialize.parse({ name, text }), serialize.describe({ type: "S", name }), SYNC]),
      { syncToFs: false },
    );
    const prepared: Prepared = { name, parameterTypes: parse.parseDescribeStatementResults(messages) };
    this.#statements.set(text, prepared);
    return prepared;
  }
}

/** What PGlite's own path attaches to a database error, so callers see the same error either way. */
function describeFailure(
  error: unknown,
  text: string,
  params: unknown[],
  options: QueryOptions | undefined,
): unknown {
  if (typeof error === "object" && error !== null && "code" in error) {
    const failure = error as DatabaseErrorLike;
    failure.query = text;
    failure.params = params;
    failure.queryOptions = options;
  }
  return error;
}

/**
 * The query function of the client, or of one of its transactions, taking the prepared path where it can and
 * `fallback` (PGlite's own) otherwise. A statement found stale outside a transaction is run once more on the
 * fallback; inside one, the error aborts the transaction as any other would.
 */
function preparedQuery(
  client: PGlite,
  statements: StatementCache,
  fallback: Query,
  transaction: Transaction | undefined,
): Query {
  return (async <T>(text: string, params: unknown[] = [], options?: QueryOptions): Promise<Results<T>> => {
    if (!preparable(params, options)) return fallback<T>(text, params as never[], options);
    if (transaction !== undefined) {
      if (transaction.closed) throw new Error("Transaction is closed");
      return client._runExclusiveQuery(() => statements.run<T>(text, params, options));
    }
    await client._checkReady();
    try {
      return await client._runExclusiveTransaction(() =>
        client._runExclusiveQuery(async () => {
          const result = await statements.run<T>(text, params, options);
          await client.syncToFs();
          return result;
        }),
      );
    } catch (error) {
      if (!STALE_STATEMENT_CODES.has((error as DatabaseErrorLike).code ?? "")) throw error;
      return fallback<T>(text, params as never[], options);
    }
  }) as Query;
}

/**
 * Makes the client's `query`, and the `query` of each transaction it opens, prepare each statement text once
 * and run it in one call afterwards. Wraps whatever `query` the client has at the time, as its fallback.
 */
export function prepareStatements(client: PGlite): void {
  const statements = new StatementCache(client);
  client.query = preparedQuery(client, statements, client.query.bind(client), undefined);
  const transaction = client.transaction.bind(client);
  client.transaction = (<T>(callback: (tx: Transaction) => Promise<T>) =>
    transaction((tx) => {
      tx.query = preparedQuery(client, statements, tx.query.bind(tx), tx);
      return callback(tx);
    })) as PGlite["transaction"];
}
