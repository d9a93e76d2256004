/**
 * A local copy of model artifacts under DATA_DIR, so a restart loads snapshots from disk (milliseconds)
 * instead of pulling every chunk back out of Postgres (where bytea is detoasted and hex-encoded: seconds for
 * large models). Postgres stays the source of truth: artifacts are immutable per model id, a file is used
 * only when its size matches the model row, and anything unreadable falls back to the database.
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

export class ArtifactCache {
  private readonly writes = new Set<Promise<void>>();

  constructor(
    private readonly dir: string,
    private readonly logger: Logger,
  ) {}

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
      await this.prune(accountId);
    } catch (error) {
      this.logger.warn("could not cache a model artifact on disk", { accountId, modelId, error });
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
        const age = await stat(path).then(
          (s) => now - s.mtimeMs,
          () => 0,
        );
        if (age > STALE_TEMPORARY_MS) await unlink(path).catch(() => {});
      } else if (Number.isInteger(modelId) && modelId < oldestKept) {
        await unlink(path).catch(() => {});
      }
    }
  }
}
