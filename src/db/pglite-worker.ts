/**
 * The embedded database's own thread. PGlite runs Postgres compiled to WebAssembly on whichever thread calls
 * it; opened here, its statements run beside the thread that answers requests instead of on it, and that
 * thread only posts each statement and reads back its rows. Statements run one at a time, as on any
 * PGlite; a transaction holds the database until the thread that opened it ends it.
 */
import type { MessagePort } from "node:worker_threads";
import { PGlite, type Transaction } from "@electric-sql/pglite";
import { skipDefaultParserMerge } from "./pglite-parsers";
import { carry, type HostMessage, type HostRequest } from "./pglite-protocol";
import { prepareStatements } from "./pglite-statements";
import { StatementTimings, timingsFile } from "./store-timings";

declare const self: Worker;

/** The port the host reads answers from (given with "open"; see pglite-remote.ts); before it, the worker's own. */
let answers: MessagePort | undefined;
const post = (message: HostMessage) => (answers ?? self).postMessage(message);

let client: PGlite | undefined;
const transactions = new Map<number, { tx: Transaction; end: (commit: boolean) => void }>();
const unlisteners = new Map<string, () => Promise<void>>();
let nextTransaction = 0;
/** Time per kind of statement, when the host asks for it (see store-timings.ts). */
let timings: StatementTimings | undefined;

function opened(): PGlite {
  if (client === undefined || client.closed) throw new Error("PGlite is closed");
  return client;
}

async function handle(request: HostRequest): Promise<unknown> {
  switch (request.op) {
    case "open": {
      client = await PGlite.create(request.dataDir, { ...request.assets, startParams: request.startParams });
      if (request.statementTimingsFile !== undefined) {
        timings = new StatementTimings(timingsFile(request.statementTimingsFile));
      }
      // In this order, drizzle's identical per-query parsers are left out before either path sees them.
      prepareStatements(client);
      skipDefaultParserMerge(client);
      return null;
    }
    case "query": {
      const options = request.rowMode === "array" ? { rowMode: "array" as const } : undefined;
      const started = timings === undefined ? 0 : performance.now();
      let answer: Promise<unknown>;
      if (request.tx === undefined) answer = opened().query(request.text, request.params, options);
      else {
        const open = transactions.get(request.tx);
        if (open === undefined) throw new Error("Transaction is closed");
        answer = open.tx.query(request.text, request.params, options);
      }
      const kinds = timings;
      if (kinds === undefined) return answer;
      return answer.finally(() => kinds.record(request.text, performance.now() - started));
    }
    case "begin":
      return begin(opened());
    case "end": {
      const open = transactions.get(request.tx);
      if (open === undefined) throw new Error("Transaction is closed");
      transactions.delete(request.tx);
      open.end(request.commit);
      const outcome = settled.get(request.tx);
      settled.delete(request.tx);
      return outcome;
    }
    case "listen": {
      const unlisten = await opened().listen(request.channel, (payload) =>
        post({ op: "notification", channel: request.channel, payload }),
      );
      unlisteners.set(request.channel, unlisten);
      return null;
    }
    case "unlisten": {
      const unlisten = unlisteners.get(request.channel);
      unlisteners.delete(request.channel);
      if (unlisten !== undefined && client !== undefined && !client.closed) await unlisten();
      return null;
    }
    case "close":
      if (client !== undefined && !client.closed) await client.close();
      timings?.stop();
      return null;
  }
}

/** Each open transaction's outcome: resolves on commit, rejects with the error that rolled it back. */
const settled = new Map<number, Promise<unknown>>();

/** Rolls a transaction back on PGlite's side by failing its callback. */
class RolledBack extends Error {
  override name = "RolledBack";
}

/** Opens a transaction and answers its number once it holds the database. */
function begin(db: PGlite): Promise<number> {
  const id = ++nextTransaction;
  return new Promise<number>((started, failed) => {
    const outcome = db.transaction(
      (tx) =>
        new Promise<null>((commit, rollback) => {
          transactions.set(id, {
            tx,
            end: (ok) => (ok ? commit(null) : rollback(new RolledBack("rolled back by its caller"))),
          });
          started(id);
        }),
    );
    const ended = outcome.catch((error: unknown) => {
      if (!(error instanceof RolledBack)) throw error;
      return null;
    });
    // Handled here too: a transaction that fails before its caller ends it (the store closing under it) must
    // not become an unhandled rejection that takes this thread down; "end" still answers with its error.
    ended.catch(() => {});
    settled.set(id, ended);
    // A transaction that could not even start (the database closed meanwhile).
    outcome.catch((error: unknown) => {
      if (!transactions.has(id)) failed(error);
    });
  });
}

self.addEventListener("message", (event: MessageEvent<HostRequest>) => {
  const request = event.data;
  if (request.op === "open") answers = request.answers;
  handle(request).then(
    (value) => post({ op: "answer", id: request.id, value }),
    (error: unknown) => post({ op: "failure", id: request.id, error: carry(error) }),
  );
});
