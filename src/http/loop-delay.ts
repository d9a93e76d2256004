/**
 * Watches the delay of the thread that answers requests: a timer due every 20 ms records how late it fired.
 * Every request the process holds meanwhile waits at least that long, whatever the route, so this is the
 * process-side view of a stall (a slow statement on PGlite, a large JSON, a collection) that a client sees
 * as latency on /health. Exposed as `recsys_event_loop_delay_seconds` on /metrics.
 */
import type { Metrics } from "./metrics";

const INTERVAL_MS = 20;

export function monitorLoopDelay(metrics: Pick<Metrics, "observeLoopDelay">): () => void {
  let expected = performance.now() + INTERVAL_MS;
  const timer = setInterval(() => {
    const now = performance.now();
    metrics.observeLoopDelay(Math.max(0, now - expected) / 1000);
    expected = now + INTERVAL_MS;
  }, INTERVAL_MS);
  // The monitor never keeps the process alive.
  timer.unref();
  return () => clearInterval(timer);
}
