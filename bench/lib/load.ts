import autocannon from "autocannon";
import type { LoadOptions, LoadResult } from "./load-types";
import { runWrk, wrkAvailable } from "./wrk";

export type { LoadOptions, LoadRequest, LoadResult } from "./load-types";

/**
 * One bounded load run against 127.0.0.1: wrk when it is installed (the bench's load must come from a
 * generator faster than the service), autocannon otherwise or when asked for; the result names which ran.
 */
export function runLoad(options: LoadOptions): Promise<LoadResult> {
  const url = new URL(options.baseUrl);
  if (url.hostname !== "127.0.0.1")
    throw new Error(`load generation is only allowed against 127.0.0.1, not ${url}`);
  if (options.generator !== "autocannon" && wrkAvailable()) return runWrk(options);
  return runAutocannon(options);
}

/**
 * One bounded autocannon run against 127.0.0.1. Latencies are collected from autocannon's per-response event
 * (fractional milliseconds) because its own histogram rounds to whole milliseconds.
 */
function runAutocannon(options: LoadOptions): Promise<LoadResult> {
  const latencies: number[] = [];
  let next = 0;
  let firstSent = Number.POSITIVE_INFINITY;
  let lastDone = 0;
  let responses = 0;
  const reqs = options.requests;
  const headers = { "content-type": "application/json", ...options.headers };
  return new Promise((resolvePromise, reject) => {
    const started = performance.now();
    const instance = autocannon(
      {
        url: options.baseUrl,
        connections: options.connections,
        duration: options.durationSeconds,
        // Not `amount`: with it autocannon ignores `duration` and runs until the count is reached.
        maxOverallRequests: options.maxRequests,
        headers,
        requests: [
          {
            setupRequest: (req: Record<string, unknown>) => {
              const r = reqs[next++ % reqs.length]!;
              return { ...req, method: r.method, path: r.path, body: r.body, headers };
            },
          },
        ],
      },
      (error: Error | null, result: autocannon.Result) => {
        if (error) return reject(error);
        // autocannon ends runs on its one-second ticks, so its wall time overstates short runs: throughput is
        // counted from the first request sent to the last response received instead.
        const seconds = Number.isFinite(firstSent)
          ? (lastDone - firstSent) / 1000
          : (performance.now() - started) / 1000;
        latencies.sort((a, b) => a - b);
        const pct = (p: number) =>
          latencies.length === 0
            ? Number.NaN
            : latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))]!;
        const mean = latencies.reduce((a, b) => a + b, 0) / Math.max(1, latencies.length);
        resolvePromise({
          requests: result.requests.total,
          seconds,
          rps: responses / Math.max(seconds, 1e-9),
          p50Ms: pct(0.5),
          p99Ms: pct(0.99),
          meanMs: mean,
          errors: result.errors + result.timeouts,
          non2xx: result.non2xx,
          generator: "autocannon",
        });
      },
    );
    instance.on("response", (_client: unknown, statusCode: number, _bytes: number, ms: number) => {
      const now = performance.now();
      firstSent = Math.min(firstSent, now - ms);
      lastDone = now;
      responses++;
      if (statusCode >= 200 && statusCode < 300) latencies.push(ms);
    });
  });
}
