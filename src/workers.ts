/**
 * WORKERS=N: N server processes on one port. The process the operator started (worker 0) binds the port
 * with SO_REUSEPORT and starts the others with the same command and settings plus the bound port, so the
 * kernel spreads connections over all of them. Each process keeps its own snapshots and caches and shares
 * the database, Redis and the job table, exactly as separately started processes do; that is why more than
 * one worker needs DATABASE_URL.
 *
 * Worker 0 supervises: a worker that dies is started again (at most once a second), SIGTERM is passed on
 * and waited for. A worker whose supervisor has gone (SIGKILL, crash) notices that its parent changed and
 * shuts itself down, so no orphan keeps serving an old version on the port.
 */
import type { Subprocess } from "bun";
import type { Logger } from "./shared/logger";

const RESTART_DELAY_MS = 1_000;
const PARENT_CHECK_MS = 1_000;

export interface WorkerPool {
  /** SIGTERM to every worker; resolves once they have all exited. */
  stop(): Promise<void>;
}

/** The command that started this process: the compiled binary alone, or bun with the entry script. */
function ownCommand(): string[] {
  const compiled = Bun.main.startsWith("/$bunfs/") || Bun.main.startsWith("B:/~BUN/");
  return compiled
    ? [process.execPath, ...process.argv.slice(2)]
    : [process.execPath, Bun.main, ...process.argv.slice(2)];
}

export function startWorkers(options: { count: number; port: number; logger: Logger }): WorkerPool {
  const { logger } = options;
  const running = new Map<number, Subprocess>();
  let stopping = false;

  const spawn = (index: number): void => {
    const child = Bun.spawn(ownCommand(), {
      env: { ...process.env, PORT: String(options.port), RS_WORKER_INDEX: String(index) },
      stdin: "ignore",
      stdout: "inherit",
      stderr: "inherit",
      onExit: (_proc, exitCode, signalCode) => {
        running.delete(index);
        if (stopping) return;
        logger.warn("worker exited; starting it again", { worker: index, exitCode, signalCode });
        setTimeout(() => {
          if (!stopping) spawn(index);
        }, RESTART_DELAY_MS);
      },
    });
    running.set(index, child);
  };

  for (let index = 1; index < options.count; index++) spawn(index);
  logger.info("workers started", { workers: options.count, port: options.port });

  return {
    async stop() {
      stopping = true;
      const children = [...running.values()];
      for (const child of children) child.kill("SIGTERM");
      await Promise.all(children.map((child) => child.exited));
    },
  };
}

/** In a started worker: shut down when the supervising process is gone. */
export function exitWithParent(onOrphaned: () => void): void {
  const parent = process.ppid;
  const timer = setInterval(() => {
    if (process.ppid !== parent) {
      clearInterval(timer);
      onOrphaned();
    }
  }, PARENT_CHECK_MS);
  timer.unref();
}
