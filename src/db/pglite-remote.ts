/**
 * The embedded database as the thread that answers requests sees it: the part of PGlite's interface drizzle
 * uses (`query`, `transaction`) and the service uses (`listen`, `close`), each call posted to the worker
 * that owns the database (pglite-worker.ts) and answered from there. Statements cost this thread only their
 * posting and their rows' copy; Postgres's own work runs on the worker's.
 */
import { MessageChannel, type MessagePort, receiveMessageOnPort } from "node:worker_threads";
import type { QueryOptions, Results } from "@electric-sql/pglite";
import { pgliteAssets } from "./pglite-assets";
import { sameAsDefaults } from "./pglite-parsers";
import { type HostMessage, type HostRequest, revive } from "./pglite-protocol";

type Request = HostRequest extends infer R ? (R extends { id: number } ? Omit<R, "id"> : never) : never;

/** What drizzle's PGlite session calls on a transaction. */
export interface RemoteTransaction {
  query<T>(text: string, params?: unknown[], options?: QueryOptions): Promise<Results<T>>;
  readonly closed: boolean;
}

/** Bun's Worker, which can stop keeping the process alive (`unref`) and start again (`ref`). */
type RefWorker = Worker & { ref(): void; unref(): void };

export class RemotePglite {
  #closed = false;
  /** Set by `close()`: the thread's end that follows is a shutdown, not a loss. */
  #closing = false;
  readonly #lostHandlers: ((error: Error) => void)[] = [];
  #nextId = 0;
  readonly #pending = new Map<
    number,
    { resolve: (value: unknown) => void; reject: (error: Error) => void }
  >();
  readonly #listeners = new Map<
    string,
    { readonly callbacks: Set<(payload: string) => void>; readonly ready: Promise<unknown> }
  >();

  /**
   * The worker answers on a port of its own rather than through the worker's: a port's messages can also be
   * taken at once (`takeAnswers`), without waiting for this thread's event loop to come round to them.
   */
  private constructor(
    private readonly worker: RefWorker,
    private readonly answers: MessagePort,
  ) {
    answers.on("message", (message: HostMessage) => this.#receive(message));
    // The worker keeps the process alive while a statement is under way (see #call); the port never does.
    answers.unref();
    // Anything the worker posts before it has the port comes the worker's own way.
    worker.addEventListener("message", (event: MessageEvent<HostMessage>) => this.#receive(event.data));
    worker.addEventListener("error", (event: ErrorEvent) =>
      this.#fail(new Error(`the embedded database's thread failed: ${event.message}`)),
    );
    worker.addEventListener("close", () => this.#fail(new Error("PGlite is closed")));
  }

  /** Starts the worker and opens the data directory in it. */
  static async open(
    dataDir: string,
    startParams: string[],
    statementTimingsFile?: string,
  ): Promise<RemotePglite> {
    const worker = new Worker(new URL("./pglite-worker.ts", import.meta.url)) as RefWorker;
    worker.unref();
    const { port1, port2 } = new MessageChannel();
    const remote = new RemotePglite(worker, port1);
    try {
      const assets = await pgliteAssets();
      await remote.#call({ op: "open", dataDir, startParams, assets, answers: port2, statementTimingsFile }, [
        port2,
      ]);
    } catch (error) {
      worker.terminate();
      port1.close();
      throw error;
    }
    return remote;
  }

  get closed(): boolean {
    return this.#closed;
  }

  /**
   * Calls `handler` once if the database's thread ends while the database is open (the thread failed, or
   * PGlite aborted): every statement after that fails, so the service cannot go on. Never after `close()`.
   */
  onLost(handler: (error: Error) => void): void {
    this.#lostHandlers.push(handler);
  }

  /**
   * Settles now the statements whose answers have arrived, instead of when this thread's event loop next
   * turns to them: a busy loop serves every request queued on the other connections first, which was about
   * a millisecond at the median under the shop mix, and several at its tail, added to every statement. The
   * HTTP kernel calls this as each request starts (KernelOptions.onRequest). Returns how many it settled.
   */
  takeAnswers(): number {
    let settled = 0;
    while (this.#pending.size > 0) {
      const taken = receiveMessageOnPort(this.answers);
      if (taken === undefined) break;
      const message = taken.message as HostMessage;
      // A notification's callbacks run after the request that took it, never inside it (one that throws
      // must not fail that request); settling an answer's promise runs nothing yet.
      if (message.op === "notification") queueMicrotask(() => this.#receive(message));
      else {
        this.#receive(message);
        settled++;
      }
    }
    return settled;
  }

  query<T>(text: string, params: unknown[] = [], options?: QueryOptions): Promise<Results<T>> {
    return this.#query<T>(undefined, text, params, options);
  }

  /**
   * Runs `callback` in a transaction: committed when it resolves, rolled back when it throws. The worker holds
   * the database for it meanwhile, as PGlite does for a transaction on its own thread.
   */
  async transaction<T>(callback: (tx: RemoteTransaction) => Promise<T>): Promise<T> {
    const id = (await this.#call({ op: "begin" })) as number;
    let closed = false;
    const tx: RemoteTransaction = {
      query: <R>(text: string, params: unknown[] = [], options?: QueryOptions) => {
        if (closed) return Promise.reject(new Error("Transaction is closed"));
        return this.#query<R>(id, text, params, options);
      },
      get closed() {
        return closed;
      },
    };
    let result: T;
    try {
      result = await callback(tx);
    } catch (error) {
      closed = true;
      await this.#call({ op: "end", tx: id, commit: false }).catch(() => {});
      throw error;
    }
    closed = true;
    await this.#call({ op: "end", tx: id, commit: true });
    return result;
  }

  async listen(channel: string, onPayload: (payload: string) => void): Promise<() => Promise<void>> {
    let subscription = this.#listeners.get(channel);
    if (subscription === undefined) {
      const created = {
        callbacks: new Set<(payload: string) => void>(),
        ready: this.#call({ op: "listen", channel }),
      };
      subscription = created;
      this.#listeners.set(channel, created);
      // A subscription the worker refused is forgotten, so the next listen asks again.
      created.ready.catch(() => {
        if (this.#listeners.get(channel) === created) this.#listeners.delete(channel);
      });
    }
    // Every caller waits until the worker listens, so a notification sent after this resolves reaches it.
    await subscription.ready;
    subscription.callbacks.add(onPayload);
    const joined = subscription;
    return async () => {
      if (!joined.callbacks.delete(onPayload) || joined.callbacks.size > 0) return;
      if (this.#listeners.get(channel) === joined) this.#listeners.delete(channel);
      if (!this.#closed) await this.#call({ op: "unlisten", channel });
    };
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closing = true;
    try {
      await this.#call({ op: "close" });
    } finally {
      this.#closed = true;
      this.worker.terminate();
      this.answers.close();
    }
  }

  #query<T>(
    tx: number | undefined,
    text: string,
    params: unknown[],
    options: QueryOptions | undefined,
  ): Promise<Results<T>> {
    if (options !== undefined && !forwardable(options)) {
      return Promise.reject(
        new Error("this query option is not available on the embedded database's thread"),
      );
    }
    const rowMode = options?.rowMode;
    return this.#call({
      op: "query",
      ...(tx === undefined ? {} : { tx }),
      text,
      params,
      ...(rowMode === undefined ? {} : { rowMode }),
    }) as Promise<Results<T>>;
  }

  #call(request: Request, transfer: Transferable[] = []): Promise<unknown> {
    if (this.#closed) return Promise.reject(new Error("PGlite is closed"));
    const id = ++this.#nextId;
    return new Promise((resolve, reject) => {
      // The thread keeps the process alive only while a statement is under way, as PGlite on this thread did.
      if (this.#pending.size === 0) this.worker.ref();
      this.#pending.set(id, { resolve, reject });
      this.worker.postMessage({ ...request, id } as HostRequest, transfer);
    });
  }

  #receive(message: HostMessage): void {
    if (message.op === "notification") {
      for (const callback of this.#listeners.get(message.channel)?.callbacks ?? []) callback(message.payload);
      return;
    }
    const pending = this.#pending.get(message.id);
    if (pending === undefined) return;
    this.#pending.delete(message.id);
    if (this.#pending.size === 0) this.worker.unref();
    if (message.op === "answer") pending.resolve(message.value);
    else pending.reject(revive(message.error));
  }

  #fail(error: Error): void {
    const lost = !this.#closed && !this.#closing;
    this.#closed = true;
    for (const { reject } of this.#pending.values()) reject(error);
    this.#pending.clear();
    if (lost) for (const handler of this.#lostHandlers) handler(error);
  }
}

/** Options the worker reproduces: the row mode, and parsers only when they are the client's defaults. */
function forwardable(options: QueryOptions): boolean {
  for (const [key, value] of Object.entries(options)) {
    if (value === undefined || key === "rowMode") continue;
    if (key === "parsers" && sameAsDefaults(value as NonNullable<QueryOptions["parsers"]>)) continue;
    return false;
  }
  return true;
}
