/**
 * Load from wrk (C, event loop per thread) when it is installed: autocannon runs in Node and saturates near
 * the service's own speed, which pulls every ratio against /health towards 1. Requests come from a file of
 * `METHOD<TAB>PATH<TAB>BODY` lines read by a Lua script: each wrk thread takes every n-th line, so threads
 * never send the same request, and cycles through them (or, with `once`, stops when its share is sent:
 * first requests of users never seen must not be repeated; wrk itself would wait out its duration, so it
 * is interrupted once every thread has said it is done, and reports the time actually spent).
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { LoadOptions, LoadResult } from "./load-types";

const WRK_THREADS = 2;

const SCRIPT = String.raw`
local counter = 0
function setup(thread)
  thread:set("tid", counter)
  counter = counter + 1
end

local reqs = {}
local n = 0
local i = 0
local once = false
-- Read when the script loads: wrk decides then whether the script paces its requests.
local think = tonumber(os.getenv("WRK_THINK_MS")) or 0

function init(args)
  local file = args[1]
  local threads = tonumber(args[2])
  once = args[3] == "once"
  local line_no = 0
  for line in io.lines(file) do
    if line_no % threads == tid then
      local method, path, body = line:match("^([^\t]*)\t([^\t]*)\t?(.*)$")
      if body == "" then body = nil end
      n = n + 1
      reqs[n] = wrk.format(method, path, nil, body)
    end
    line_no = line_no + 1
  end
end

local finished = false
local function finish()
  if not finished then
    finished = true
    io.write("WRKDONE\n")
    io.flush()
  end
  wrk.thread:stop()
end

function request()
  i = i + 1
  if i > n then
    if once then
      -- Every request of this thread's share was sent: stop the thread. The connections still asking in
      -- this turn of the event loop get the last request again (at most one each).
      i = n
      finish()
    else
      i = 1
    end
  end
  return reqs[i]
end

if think > 0 then
  function delay()
    return math.floor(-math.log(1 - math.random()) * think + 0.5)
  end
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'WRKJSON {"requests":%d,"durationUs":%d,"socketErrors":%d,"non2xx":%d,"timeouts":%d,"p50Us":%d,"p99Us":%d,"meanUs":%f}\n',
    summary.requests, summary.duration, e.connect + e.read + e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(99), latency.mean))
end
`;

export function wrkAvailable(): boolean {
  return Bun.which("wrk") !== null;
}

export async function runWrk(options: LoadOptions): Promise<LoadResult> {
  const dir = mkdtempSync(join(tmpdir(), "rs-wrk-"));
  try {
    const scriptPath = join(dir, "requests.lua");
    const requestsPath = join(dir, "requests.tsv");
    writeFileSync(scriptPath, SCRIPT);
    writeFileSync(
      requestsPath,
      `${options.requests.map((r) => `${r.method}\t${r.path}\t${r.body ?? ""}`).join("\n")}\n`,
    );
    const headers = { "content-type": "application/json", ...options.headers };
    const threads = Math.min(WRK_THREADS, options.connections);
    const headerArgs = Object.entries(headers).flatMap(([name, value]) => ["-H", `${name}: ${value}`]);
    const proc = Bun.spawn(
      [
        "wrk",
        `-t${threads}`,
        `-c${options.connections}`,
        `-d${Math.max(1, Math.round(options.durationSeconds))}s`,
        "--timeout",
        "10s",
        ...headerArgs,
        "-s",
        scriptPath,
        options.baseUrl,
        "--",
        requestsPath,
        String(threads),
        options.once ? "once" : "cycle",
      ],
      {
        stdout: "pipe",
        stderr: "pipe",
        env: { ...process.env, WRK_THINK_MS: String(options.thinkMs ?? 0) },
      },
    );
    let stdout = "";
    const readStdout = (async () => {
      const decoder = new TextDecoder();
      let interrupted = false;
      for await (const chunk of proc.stdout) {
        stdout += decoder.decode(chunk, { stream: true });
        if (!interrupted && options.once && stdout.split("WRKDONE").length - 1 >= threads) {
          interrupted = true;
          proc.kill("SIGINT");
        }
      }
    })();
    const [, stderr, exitCode] = await Promise.all([
      readStdout,
      new Response(proc.stderr).text(),
      proc.exited,
    ]);
    const line = /^WRKJSON (.*)$/m.exec(stdout)?.[1];
    if (exitCode !== 0 || line === undefined) {
      throw new Error(`wrk failed (exit ${exitCode}): ${stderr.trim() || stdout.trim()}`);
    }
    const r = JSON.parse(line) as {
      requests: number;
      durationUs: number;
      socketErrors: number;
      non2xx: number;
      timeouts: number;
      p50Us: number;
      p99Us: number;
      meanUs: number;
    };
    const seconds = r.durationUs / 1e6;
    return {
      requests: r.requests,
      seconds,
      rps: r.requests / Math.max(seconds, 1e-9),
      p50Ms: r.p50Us / 1000,
      p99Ms: r.p99Us / 1000,
      meanMs: r.meanUs / 1000,
      errors: r.socketErrors + r.timeouts,
      non2xx: r.non2xx,
      generator: "wrk",
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
