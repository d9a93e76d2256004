/**
 * A local copy of model artifacts under DATA_DIR, so a restart loads snapshots from disk (milliseconds)
 * instead of pulling every chunk back out of Postgres (where bytea is detoasted and hex-encoded: seconds for
 * large models). Postgres stays the source of truth: artifacts are immutable per model id, a file is used
 * only when its size matches the model row, and anything unreadable falls back to the database.
 */
import { mkdir, readdir, rename, unlink } from "node:fs/promises";
import { join } from "node:path";
import type { Logger } from "../shared/logger";

/** Files kept per account: the serving model and the one that may replace it. */
const KEEP_PER_ACCOUNT = 2;

export class ArtifactCache {
  constructor(
    private readonly dir: string,
    private readonly logger: Logger,
  ) {}

  private path(accountId: number, modelId: number): string {
    return join(this.dir, `${accountId}-${modelId}.artifact`);
  }

  async read(accountId: number, modelId: number, expectedBytes: number): Promise<Uint8Array | undefined> {
    try {
      const file = Bun.file(this.path(accountId, modelId));
      if (!(await file.exists()) || file.size !== expectedBytes) return undefined;
      return new Uint8Array(await file.arrayBuffer());
    } catch {
      return undefined;
    }
  }

  /** Best effort: a failed write only means the next load reads the database. */
  async write(accountId: number, modelId: number, bytes: Uint8Array): Promise<void> {
    try {
      await mkdir(this.dir, { recursive: true });
      const target = this.path(accountId, modelId);
      const temporary = `${target}.${process.pid}.tmp`;
      await Bun.write(temporary, bytes);
      await rename(temporary, target);
      await this.prune(accountId);
    } catch (error) {
      this.logger.warn("could not cache a model artifact on disk", { accountId, modelId, error });
    }
  }

  private async prune(accountId: number): Promise<void> {
    const prefix = `${accountId}-`;
    const modelIds = (await readdir(this.dir))
      .filter((name) => name.startsWith(prefix) && name.endsWith(".artifact"))
      .map((name) => Number(name.slice(prefix.length, -".artifact".length)))
      .filter((id) => Number.isInteger(id))
      .sort((a, b) => b - a);
    for (const modelId of modelIds.slice(KEEP_PER_ACCOUNT)) {
      await unlink(this.path(accountId, modelId)).catch(() => {});
    }
  }
}
