/**
 * `last_used_at` without a write per request: uses are remembered in memory and written in one statement
 * at most every FLUSH_MS (and on stop). Readers merge `pending()` so this process always shows fresh values.
 */
import { type SQL, sql } from "drizzle-orm";
import type { Database } from "../../db/client";
import type { Logger } from "../../shared/logger";

const FLUSH_MS = 30_000;

export class LastUsedBuffer {
  /** Key id → time of its latest use (epoch ms: noted on every authenticated request, so no Date each time). */
  private readonly uses = new Map<number, number>();
  private timer: ReturnType<typeof setInterval> | undefined;
  private flushing: Promise<void> | undefined;

  constructor(
    private readonly database: Database,
    private readonly logger: Logger,
    private readonly intervalMs = FLUSH_MS,
  ) {}

  start(): void {
    this.timer ??= setInterval(() => void this.flush(), this.intervalMs);
    // The timer must not keep a process alive that is otherwise done.
    (this.timer as { unref?: () => void }).unref?.();
  }

  async stop(): Promise<void> {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
    await this.flush();
  }

  touch(keyId: number, at = Date.now()): void {
    this.uses.set(keyId, at);
  }

  pending(keyId: number): Date | undefined {
    const at = this.uses.get(keyId);
    return at === undefined ? undefined : new Date(at);
  }

  async flush(): Promise<void> {
    if (this.flushing !== undefined) return this.flushing;
    if (this.uses.size === 0) return;
    const batch = [...this.uses];
    this.uses.clear();
    const values: SQL[] = batch.map(
      ([id, at]) => sql`(${id}::int, ${new Date(at).toISOString()}::timestamptz)`,
    );
    this.flushing = this.database
      .rows(
        sql`update api_keys set last_used_at = greatest(coalesce(api_keys.last_used_at, v.at), v.at)
            from (values ${sql.join(values, sql`, `)}) as v(id, at) where api_keys.id = v.id`,
      )
      .then(() => undefined)
      .catch((error: unknown) => {
        // Put the uses back (unless newer ones arrived) so the next flush retries them.
        for (const [id, at] of batch) if (!this.uses.has(id)) this.uses.set(id, at);
        this.logger.warn("could not record api key use", { error });
      })
      .finally(() => {
        this.flushing = undefined;
      });
    return this.flushing;
  }
}
