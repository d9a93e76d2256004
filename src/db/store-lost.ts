/**
 * The embedded store runs inside this process: once its thread has ended, nothing can be stored or read
 * until the process starts again, while `/health` would go on answering that the database is unreachable and
 * nothing would ever bring it back. The process ends instead, non-zero, so that its supervisor (systemd's
 * `Restart=on-failure`, a container's restart policy) starts it again; PGlite recovers the data directory
 * from its write-ahead log as it opens, as after any crash. Postgres never loses its store this way.
 */
import type { Logger } from "../shared/logger";
import type { Database } from "./client";

/** EX_SOFTWARE: the process cannot go on, and starting it again is the remedy. */
export const STORE_LOST_EXIT_CODE = 70;

export function exitWhenStoreLost(
  database: Pick<Database, "onLost">,
  logger: Pick<Logger, "error">,
  exit: (code: number) => void = (code) => process.exit(code),
): void {
  database.onLost((error) => {
    logger.error("the embedded database stopped; exiting so that the service is started again", {
      error,
      exitCode: STORE_LOST_EXIT_CODE,
    });
    exit(STORE_LOST_EXIT_CODE);
  });
}
