/**
 * Model artifacts as files under DATA_DIR/artifacts (`<account>-<model>.artifact`), in one of two roles:
 *
 * - On Postgres they are local copies, so a restart loads snapshots from disk (milliseconds) instead of
 *   pulling every chunk back out of Postgres. Postgres stays the source of truth: artifacts are immutable per
 *   model id, a file is used only when its size matches the model row, anything unreadable falls back to the
 *   database, and only the newest two models of an account keep a copy.
 * - On the embedded store (`primary`) the file is the artifact: the database holds only the model row (its
 *   size in `artifact_bytes`). Writing 100 MB into PGlite froze the service for seconds when PGlite ran on
 *   the thread that answers requests, and would still hold the database's thread for that long. A file is
 *   written by the training worker instead and renamed into place in the transaction that stores the model
 *   row. Files are dropped only once a newer model of the account is published (the service never serves
 *   an older one again).
 *
 * Beside each artifact its HNSW indexes are kept as files of their own (`<account>-<model>.<name>.hnsw`,
 * written by the first load): hnswlib reads them in place, so a load neither copies the index bytes out of
 * the artifact nor writes them to a temporary file. The artifact itself is memory-mapped, so the index
 * sections it also holds are not read (beyond the few windows compared with the index files).
 */
import { mkdir, readdir, rename, stat, unlink } from "node:fs/promises";
import { join } from "node:path";
import type { AnnFiles } from "../engine";
import type { Logger } from "../shared/logger";

/** Files kept per account: the serving model and the one that may replace it. */
const KEEP_PER_ACCOUNT = 2;
/** A temporary file this old was left by a process that stopped mid-write. */
const STALE_TEMPORARY_MS = 60 * 60 * 1000;

export interface ArtifactCacheOptions {
  /** The files are the artifacts (embedded store), not copies of the database's. */
  primary?: boolean;
  /** Models of the account still served though not published (pinned by a running experiment): kept. */
  pinned?: (accountId: number) => readonly number[];
}

export class ArtifactCache {
  private readonly writes = new Set<Promise<void>>();
  readonly primary: boolean;
  private readonly pinned: (accountId: number) => readonly number[];

  constructor(
    /** The directory the files are kept in. */
    readonly dir: string,
    private readonly logger: Logger,
    options: ArtifactCacheOptions = {},
  ) {
    this.primary = options.primary ?? false;
    this.pinned = options.pinned ?? (() => []);
  }

  private path(accountId: number, modelId: number): string {
    return join(this.dir, `${accountId}-${modelId}.artifact`);
  }

  /** Where the model's HNSW indexes are kept; the directory exists once this resolves. */
  async annFiles(accountId: number, modelId: number): Promise<AnnFiles | undefined> {
    try {
      await mkdir(this.dir, { recursive: true });
    } catch {
      return undefined;
    }
    const base = join(this.dir, `${accountId}-${modelId}`);
    return { factors: `${base}.factors.hnsw`, content: `${base}.content.hnsw` };
  }

  /** The artifact's file when it is there at the expected size (a file of another size is not this model's). */
  async file(accountId: number, modelId: number, expectedBytes: number): Promise<string | undefined> {
    const path = this.path(accountId, modelId);
    try {
      const file = Bun.file(path);
      return expectedBytes > 0 && (await file.exists()) && file.size === expectedBytes ? path : undefined;
    } catch {
      return undefined;
    }
  }

  /**
   * Where a training job's worker writes the artifact before the model has an id; `adopt` moves it into
   * place. A file left here by a stopped process is removed by a later prune once it is stale.
   */
  async stagingPath(accountId: number, jobId: number): Promise<string> {
    await mkdir(this.dir, { recursive: true });
    return join(this.dir, `${accountId}-job${jobId}.${process.pid}.${crypto.randomUUID().slice(0, 8)}.tmp`);
  }

  /** Gives a staged artifact its model's name (atomic: a reader sees the whole file or none). */
  async adopt(staged: string, accountId: number, modelId: number): Promise<void> {
    await rename(staged, this.path(accountId, modelId));
  }

  /** Removes a staged file, or the file of a model whose row was rolled back; never throws. */
  async discard(path: string): Promise<void>;
  async discard(accountId: number, modelId: number): Promise<void>;
  async discard(target: string | number, modelId?: number): Promise<void> {
    const path = typeof target === "string" ? target : this.path(target, modelId!);
    await unlink(path).catch(() => {});
  }

  /**
   * After a model of the account was stored: copies are pruned to the newest two models; primary files of
   * models older than the published one (which can never serve again unless an experiment pins them) are
   * removed.
   */
  async settleAccount(accountId: number, publishedModelId: number | null): Promise<void> {
    try {
      if (!this.primary) await this.prune(accountId);
      else if (publishedModelId !== null) await this.removeOlder(accountId, publishedModelId);
    } catch (error) {
      this.logger.warn("could not prune model artifact files", { accountId, error });
    }
  }

  /**
   * The artifact's bytes, memory-mapped (copy-on-write: nothing written to them reaches the file; files are
   * only ever replaced by rename, never rewritten in place) or read when mapping is not possible.
   */
  async read(accountId: number, modelId: number, expectedBytes: number): Promise<Uint8Array | undefined> {
    const path = this.path(accountId, modelId);
    try {
      const file = Bun.file(path);
      if (!(await file.exists()) || file.size !== expectedBytes || expectedBytes === 0) return undefined;
      try {
        return Bun.mmap(path, { shared: false });
      } catch {
        return new Uint8Array(await file.arrayBuffer());
      }
    } catch {
      return undefined;
    }
  }

  /** Best effort: a failed write only means the next load reads the database. */
  write(accountId: number, modelId: number, bytes: Uint8Array): Promise<void> {
    const pending = this.store(accountId, modelId, bytes).finally(() => this.writes.delete(pending));
    this.writes.add(pending);
    return pending;
  }

  /** Waits for copies still being written (a graceful shutdown keeps them for the next start). */
  async settle(): Promise<void> {
    await Promise.allSettled([...this.writes]);
  }

  private async store(accountId: number, modelId: number, bytes: Uint8Array): Promise<void> {
    try {
      await mkdir(this.dir, { recursive: true });
      const target = this.path(accountId, modelId);
      // Unique per write: two loads of one model in one process write at the same time, and a shared name
      // let one rename the other's file away (ENOENT on the second rename).
      const temporary = `${target}.${process.pid}.${crypto.randomUUID()}.tmp`;
      await Bun.write(temporary, bytes);
      await rename(temporary, target);
      if (!this.primary) await this.prune(accountId);
    } catch (error) {
      this.logger.warn("could not cache a model artifact on disk", { accountId, modelId, error });
    }
  }

  /** Removes the files (artifact and indexes) of the account's models older than `modelId` and not pinned. */
  private async removeOlder(accountId: number, modelId: number): Promise<void> {
    const prefix = `${accountId}-`;
    const now = Date.now();
    const pinned = new Set(this.pinned(accountId));
    for (const name of await readdir(this.dir)) {
      if (!name.startsWith(prefix)) continue;
      const path = join(this.dir, name);
      if (name.endsWith(".tmp")) {
        if (await isStale(path, now)) await unlink(path).catch(() => {});
        continue;
      }
      const id = Number(name.slice(prefix.length).split(".")[0]);
      if (Number.isInteger(id) && id < modelId && !pinned.has(id)) await unlink(path).catch(() => {});
    }
  }

  /** Keeps the newest models' files of the account and drops temporary files left by stopped processes. */
  private async prune(accountId: number): Promise<void> {
    const prefix = `${accountId}-`;
    const names = (await readdir(this.dir)).filter((name) => name.startsWith(prefix));
    const modelIds = names
      .filter((name) => name.endsWith(".artifact"))
      .map((name) => Number(name.slice(prefix.length, -".artifact".length)))
      .filter((id) => Number.isInteger(id))
      .sort((a, b) => b - a);
    // Files of models newer than the oldest kept artifact stay too (a load may write them before its copy).
    const oldestKept = modelIds.length > KEEP_PER_ACCOUNT ? modelIds[KEEP_PER_ACCOUNT - 1]! : 0;
    const now = Date.now();
    for (const name of names) {
      const modelId = Number(name.slice(prefix.length).split(".")[0]);
      const path = join(this.dir, name);
      if (name.endsWith(".tmp")) {
        if (await isStale(path, now)) await unlink(path).catch(() => {});
      } else if (Number.isInteger(modelId) && modelId < oldestKept) {
        await unlink(path).catch(() => {});
      }
    }
  }
}

/** A temporary file not touched for this long was left by a process that stopped mid-write. */
async function isStale(path: string, now: number): Promise<boolean> {
  const age = await stat(path).then(
    (s) => now - s.mtimeMs,
    () => 0,
  );
  return age > STALE_TEMPORARY_MS;
}
