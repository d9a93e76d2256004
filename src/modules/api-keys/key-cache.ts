/**
 * Resolves an API key hash to its key record. Hot path: answered from memory after the first use.
 * Revocation must take effect on the very next request in every process, so entries are evicted
 * synchronously in the revoking process and, through Postgres NOTIFY, in every other process; a cache miss
 * always reads the database. A TTL bounds the damage if a notification is ever lost.
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

export const KEY_CHANNEL = "api_key_revoked";
const TTL_MS = 60_000;
const MAX_ENTRIES = 50_000;

const asArray = (value: string[] | string): string[] =>
  typeof value === "string" ? (JSON.parse(value) as string[]) : value;

export class ApiKeyCache {
  private readonly entries = new Map<string, Entry>();
  /** Bumped on every eviction: a lookup that raced with one must not cache what it read. */
  private generation = 0;
  private unlisten: (() => Promise<void>) | undefined;

  constructor(
    private readonly database: Database,
    private readonly logger: Logger,
  ) {}

  async start(): Promise<void> {
    this.unlisten = await this.database.listen(KEY_CHANNEL, (payload) => this.applyNotice(payload));
  }

  async stop(): Promise<void> {
    await this.unlisten?.();
    this.unlisten = undefined;
    this.entries.clear();
  }

  async resolve(hash: string): Promise<ResolvedKey | undefined> {
    // The map is keyed by the hash itself, so a hit is an exact match; no second comparison is needed.
    const cached = this.entries.get(hash);
    if (cached !== undefined && Date.now() - cached.loadedAt < TTL_MS) return cached.key;
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

  /** Call after the revoking statement committed: evicts here at once and tells every other process. */
  async revoked(target: { keyIds: readonly number[] } | { accountId: number }): Promise<void> {
    const payload = "accountId" in target ? `account:${target.accountId}` : `keys:${target.keyIds.join(",")}`;
    this.applyNotice(payload);
    try {
      await this.database.notify(KEY_CHANNEL, payload);
    } catch (error) {
      this.logger.error("could not announce api key revocation", { error });
    }
  }

  private applyNotice(payload: string): void {
    this.generation++;
    const [kind, list = ""] = payload.split(":");
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
