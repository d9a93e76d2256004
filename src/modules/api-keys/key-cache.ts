/**
 * Resolves an API key hash to its key record. Hot path: answered from memory after the first use.
 * Revocation must take effect on the very next request in every process. The revoking process evicts at
 * once and announces the revocation with Postgres NOTIFY; every other process evicts on hearing it and
 * acknowledges, and the revocation returns only when every process listening on the database has
 * acknowledged (or, if one never answers, after a timeout, with an error logged). A request sent
 * after the revocation returned therefore meets no cached copy anywhere; a cache miss always reads the
 * database, and a TTL bounds the damage if a notification is ever lost.
 */
import { sql } from "drizzle-orm";
import type { Database } from "../../db/client";
import type { Logger } from "../../shared/logger";
import { type ApiKeyKind, sameHash } from "./key-material";

export interface ResolvedKey {
  readonly keyId: number;
  readonly accountId: number;
  readonly kind: ApiKeyKind;
  readonly keyHash: string;
  readonly scopes: readonly string[];
  readonly allowedDomains: readonly string[];
}

interface Entry {
  key: ResolvedKey;
  loadedAt: number;
}

interface KeyRow {
  id: number;
  account_id: number;
  kind: string;
  key_hash: string;
  scopes: string[] | string;
  allowed_domains: string[] | string;
}

/**
 * `<scope>:<nonce>:<origin instance id>`, the scope being `keys:<id>,<id>…` or `account:<id>`; a process
 * that reads only `<kind>:<list>` (an earlier version, during a rolling upgrade) still evicts the scope.
 */
export const KEY_CHANNEL = "api_key_revoked";
/** `<nonce> <instance id>`: that instance has applied the revocation announced with that nonce. */
export const KEY_ACK_CHANNEL = "api_key_revoked_ack";
const TTL_MS = 60_000;
/** How long a revocation waits for the other processes' acknowledgements. */
const ACK_TIMEOUT_MS = 3_000;
const MAX_ENTRIES = 50_000;

const asArray = (value: string[] | string): string[] =>
  typeof value === "string" ? (JSON.parse(value) as string[]) : value;

export class ApiKeyCache {
  private readonly entries = new Map<string, Entry>();
  /** Bumped on every eviction: a lookup that raced with one must not cache what it read. */
  private generation = 0;
  private unlisten: Array<() => Promise<void>> = [];
  /** Revocations of this process waiting for acknowledgements: nonce → instances still to answer. */
  private readonly awaiting = new Map<string, { pending: Set<string>; done: () => void }>();

  constructor(
    private readonly database: Database,
    private readonly logger: Logger,
    private readonly ackTimeoutMs = ACK_TIMEOUT_MS,
  ) {}

  async start(): Promise<void> {
    this.unlisten = [
      await this.database.listen(KEY_ACK_CHANNEL, (payload) => this.receiveAck(payload)),
      await this.database.listen(KEY_CHANNEL, (payload) => this.receiveNotice(payload), { visible: true }),
    ];
  }

  async stop(): Promise<void> {
    const unlisten = this.unlisten;
    this.unlisten = [];
    for (const stop of unlisten.reverse()) await stop();
    this.entries.clear();
  }

  /** The key when it is cached and fresh, without waiting: the common case of every authenticated request. */
  cached(hash: string): ResolvedKey | undefined {
    // The map is keyed by the hash itself, so a hit is an exact match; no second comparison is needed.
    const cached = this.entries.get(hash);
    return cached !== undefined && Date.now() - cached.loadedAt < TTL_MS ? cached.key : undefined;
  }

  async resolve(hash: string): Promise<ResolvedKey | undefined> {
    const cached = this.cached(hash);
    if (cached !== undefined) return cached;
    const generation = this.generation;
    const [row] = await this.database.rows<KeyRow>(
      sql`select id, account_id, kind, key_hash, scopes, allowed_domains
          from api_keys where key_hash = ${hash} and revoked_at is null`,
    );
    if (row === undefined || !sameHash(row.key_hash, hash)) return undefined;
    const key: ResolvedKey = {
      keyId: Number(row.id),
      accountId: Number(row.account_id),
      kind: row.kind === "publishable" ? "publishable" : "secret",
      keyHash: row.key_hash,
      scopes: asArray(row.scopes),
      allowedDomains: asArray(row.allowed_domains),
    };
    if (generation === this.generation) {
      if (this.entries.size >= MAX_ENTRIES) this.entries.clear();
      this.entries.set(hash, { key, loadedAt: Date.now() });
    }
    return key;
  }

  /**
   * Call after the revoking statement committed: evicts here at once, tells every other process and
   * returns when they have all evicted too.
   */
  async revoked(target: { keyIds: readonly number[] } | { accountId: number }): Promise<void> {
    const scope = "accountId" in target ? `account:${target.accountId}` : `keys:${target.keyIds.join(",")}`;
    this.evict(scope);
    const nonce = crypto.randomUUID();
    try {
      const peers = await this.database.listeners(KEY_CHANNEL);
      const acknowledged = this.acknowledgements(nonce, peers);
      await this.database.notify(KEY_CHANNEL, `${scope}:${nonce}:${this.database.instanceId}`);
      const missing = await acknowledged;
      if (missing.length > 0) {
        // Gone processes cannot answer and hold nothing; only a live, silent one is worth reporting.
        const live = new Set(await this.database.listeners(KEY_CHANNEL));
        const silent = missing.filter((id) => live.has(id));
        if (silent.length > 0)
          this.logger.error("api key revocation not acknowledged in time", { instances: silent });
      }
    } catch (error) {
      this.logger.error("could not announce api key revocation", { error });
    } finally {
      this.awaiting.delete(nonce);
    }
  }

  /** Resolves with the peers that did not acknowledge within the timeout (none when all did). */
  private acknowledgements(nonce: string, peers: readonly string[]): Promise<string[]> {
    if (peers.length === 0) return Promise.resolve([]);
    const pending = new Set(peers);
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve([...pending]), this.ackTimeoutMs);
      this.awaiting.set(nonce, {
        pending,
        done: () => {
          clearTimeout(timer);
          resolve([]);
        },
      });
    });
  }

  private receiveNotice(payload: string): void {
    const [kind = "", list = "", nonce, origin] = payload.split(":");
    this.evict(`${kind}:${list}`);
    if (nonce === undefined || origin === this.database.instanceId) return;
    this.database.notify(KEY_ACK_CHANNEL, `${nonce} ${this.database.instanceId}`).catch((error: unknown) => {
      this.logger.error("could not acknowledge api key revocation", { error });
    });
  }

  private receiveAck(payload: string): void {
    const [nonce = "", instanceId = ""] = payload.split(" ");
    const waiting = this.awaiting.get(nonce);
    if (waiting === undefined) return;
    waiting.pending.delete(instanceId);
    if (waiting.pending.size === 0) waiting.done();
  }

  private evict(scope: string): void {
    this.generation++;
    const [kind, list = ""] = scope.split(":");
    if (kind === "account") {
      const accountId = Number(list);
      for (const [hash, entry] of this.entries)
        if (entry.key.accountId === accountId) this.entries.delete(hash);
    } else if (kind === "keys") {
      const ids = new Set(list.split(",").map(Number));
      for (const [hash, entry] of this.entries) if (ids.has(entry.key.keyId)) this.entries.delete(hash);
    } else {
      this.entries.clear();
    }
  }
}
