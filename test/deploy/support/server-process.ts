/**
 * Runs the service as a real child process (source via bun, or the compiled binary) and finds its port
 * from the "listening" log line, so tests can bind PORT=0 and never collide.
 */
import { resolve } from "node:path";
import type { Subprocess } from "bun";

export const PROJECT_ROOT = resolve(import.meta.dir, "../../..");
export const MAIN = resolve(PROJECT_ROOT, "src/main.ts");
export const TEST_JWT_SECRET = "deploy-test-secret-deploy-test-secret-0123456789";

export interface ServerProcess {
  proc: Subprocess<"ignore", "pipe", "pipe">;
  /** e.g. http://127.0.0.1:41234 */
  baseUrl: string;
  /** Every stdout/stderr line so far. */
  output: string[];
  /** Sends SIGTERM and resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number>;
}

export interface StartOptions {
  /** Full environment of the child: nothing is inherited unless passed here. */
  env: Record<string, string | undefined>;
  /** Defaults to running src/main.ts with the current bun. */
  command?: string[];
  cwd?: string;
  /** How long to wait for the "listening" line. */
  timeoutMs?: number;
  scheme?: "http" | "https";
}

/** The minimal environment a child needs (PATH for `cc`, HOME for caches), plus the given settings. */
export function childEnv(settings: Record<string, string | undefined>): Record<string, string | undefined> {
  return { PATH: process.env.PATH, HOME: process.env.HOME, TMPDIR: process.env.TMPDIR, ...settings };
}

export async function startServer(options: StartOptions): Promise<ServerProcess> {
  const proc = Bun.spawn(options.command ?? [process.execPath, MAIN], {
    cwd: options.cwd ?? PROJECT_ROOT,
    env: options.env,
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const output: string[] = [];
  let onLine: ((line: string) => void) | undefined;
  const pump = async (stream: ReadableStream<Uint8Array>) => {
    const decoder = new TextDecoder();
    let buffered = "";
    for await (const chunk of stream) {
      buffered += decoder.decode(chunk, { stream: true });
      let newline = buffered.indexOf("\n");
      while (newline >= 0) {
        const line = buffered.slice(0, newline);
        buffered = buffered.slice(newline + 1);
        output.push(line);
        onLine?.(line);
        newline = buffered.indexOf("\n");
      }
    }
    if (buffered !== "") output.push(buffered);
  };
  void pump(proc.stdout);
  void pump(proc.stderr);

  const port = await new Promise<number>((resolvePort, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`server did not start in time:\n${output.join("\n")}`)),
      options.timeoutMs ?? 90_000,
    );
    const check = (line: string) => {
      const match = /"msg":"listening".*"url":"https?:\/\/[^"]*:(\d+)"/.exec(line);
      if (match) {
        clearTimeout(timer);
        resolvePort(Number(match[1]));
      }
    };
    for (const line of output) check(line);
    onLine = check;
    void proc.exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code} before listening:\n${output.join("\n")}`));
    });
  });
  onLine = undefined;

  return {
    proc,
    baseUrl: `${options.scheme ?? "http"}://127.0.0.1:${port}`,
    output,
    async stop(signal = "SIGTERM") {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill(signal);
      return proc.exited;
    },
  };
}
