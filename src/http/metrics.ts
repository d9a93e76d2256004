/**
 * The process's metrics registry, rendered in the Prometheus text format by GET /metrics.
 *
 * Recording is on the request path of every route, /health included, so it only touches preallocated
 * typed arrays: after a route's first request, recording it allocates nothing. Values are per process;
 * Prometheus sums them across processes.
 */

/** Upper bounds (seconds) of the request latency histogram. */
export const REQUEST_BUCKETS = [
  0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
] as const;
/** Upper bounds (seconds) of the training duration histogram. */
export const TRAINING_BUCKETS = [1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600] as const;

/** Upper bounds (seconds) of the event-loop delay histogram. */
export const LOOP_DELAY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5] as const;

const STATUS_CLASSES = ["1xx", "2xx", "3xx", "4xx", "5xx"] as const;
/** The label of requests that matched no route: raw paths would give every scanner its own series. */
export const UNMATCHED_ROUTE = "<unmatched>";

class Histogram {
  /** Non-cumulative counts per bucket; the last slot is +Inf. */
  readonly counts: Float64Array;
  sum = 0;
  count = 0;

  constructor(readonly bounds: readonly number[]) {
    this.counts = new Float64Array(bounds.length + 1);
  }

  observe(value: number): void {
    const bounds = this.bounds;
    let i = 0;
    while (i < bounds.length && value > (bounds[i] as number)) i++;
    this.counts[i] = (this.counts[i] as number) + 1;
    this.sum += value;
    this.count++;
  }

  render(lines: string[], name: string, labels: string): void {
    const sep = labels === "" ? "" : ",";
    let cumulative = 0;
    for (let i = 0; i < this.bounds.length; i++) {
      cumulative += this.counts[i] as number;
      lines.push(`${name}_bucket{${labels}${sep}le="${this.bounds[i]}"} ${cumulative}`);
    }
    lines.push(`${name}_bucket{${labels}${sep}le="+Inf"} ${this.count}`);
    const braces = labels === "" ? "" : `{${labels}}`;
    lines.push(`${name}_sum${braces} ${this.sum}`, `${name}_count${braces} ${this.count}`);
  }
}

/** One route's series: a latency histogram per status class, created on the first request. */
class RouteSeries {
  readonly byClass: (Histogram | undefined)[] = [undefined, undefined, undefined, undefined, undefined];
}

export interface QueueDepth {
  queue: string;
  status: string;
  jobs: number;
}

/** Values read at scrape time from elsewhere in the process (database, health probe). */
export interface ScrapeExtras {
  queueDepths?: readonly QueueDepth[];
  databaseUp?: boolean;
}

export class Metrics {
  /** method → route pattern → series. Nested maps so a lookup never builds a key string. */
  private readonly routes = new Map<string, Map<string, RouteSeries>>();
  private readonly training = new Histogram(TRAINING_BUCKETS);
  private readonly loopDelay = new Histogram(LOOP_DELAY_BUCKETS);
  private readonly trainingFailures = new Float64Array(1);
  private readonly snapshotBytes = new Map<string, number>();
  private snapshotTotal: number | undefined;
  /** cache name → [hits, misses]. */
  private readonly caches = new Map<string, Float64Array>();
  private readonly startedAt = Date.now() / 1000;

  constructor(private readonly version: string) {}

  /** Called by the HTTP kernel once per response. `route` is the matched pattern. */
  observeRequest(method: string, route: string, status: number, seconds: number): void {
    let byRoute = this.routes.get(method);
    if (byRoute === undefined) {
      byRoute = new Map();
      this.routes.set(method, byRoute);
    }
    // Elysia gives no route (undefined or "") when nothing matched.
    const key = route ? route : UNMATCHED_ROUTE;
    let series = byRoute.get(key);
    if (series === undefined) {
      series = new RouteSeries();
      byRoute.set(key, series);
    }
    const statusClass = Math.min(Math.max(Math.floor(status / 100), 1), 5) - 1;
    let histogram = series.byClass[statusClass];
    if (histogram === undefined) {
      histogram = new Histogram(REQUEST_BUCKETS);
      series.byClass[statusClass] = histogram;
    }
    histogram.observe(seconds);
  }

  /** A finished training run's wall time. */
  observeTraining(seconds: number): void {
    this.training.observe(seconds);
  }

  /** How late a timer of the request thread fired (see loop-delay.ts). */
  observeLoopDelay(seconds: number): void {
    this.loopDelay.observe(seconds);
  }

  trainingFailed(): void {
    this.trainingFailures[0] = (this.trainingFailures[0] as number) + 1;
  }

  /**
   * Memory held by an account's in-memory snapshot; 0 removes the account's series. Pass "total" to report
   * the overall figure directly (otherwise the total is the sum over accounts).
   */
  setSnapshotBytes(accountId: number | string, bytes: number): void {
    if (accountId === "total") {
      this.snapshotTotal = bytes;
      return;
    }
    const key = String(accountId);
    if (bytes <= 0) this.snapshotBytes.delete(key);
    else this.snapshotBytes.set(key, bytes);
  }

  cacheHit(name: string): void {
    const counters = this.cacheCounters(name);
    counters[0] = (counters[0] as number) + 1;
  }

  cacheMiss(name: string): void {
    const counters = this.cacheCounters(name);
    counters[1] = (counters[1] as number) + 1;
  }

  private cacheCounters(name: string): Float64Array {
    let counters = this.caches.get(name);
    if (counters === undefined) {
      counters = new Float64Array(2);
      this.caches.set(name, counters);
    }
    return counters;
  }

  /** The Prometheus text exposition (format 0.0.4). */
  render(extras: ScrapeExtras = {}): string {
    const lines: string[] = [];
    const family = (name: string, type: string, help: string) => {
      lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
    };

    family("recsys_build_info", "gauge", "Service version; always 1.");
    lines.push(`recsys_build_info{version="${escapeLabel(this.version)}"} 1`);

    family("http_requests_total", "counter", "HTTP requests answered, by method, route and status class.");
    for (const [method, byRoute] of this.routes) {
      for (const [route, series] of byRoute) {
        series.byClass.forEach((histogram, i) => {
          if (histogram === undefined) return;
          lines.push(`http_requests_total{${routeLabels(method, route, i)}} ${histogram.count}`);
        });
      }
    }
    family(
      "http_request_duration_seconds",
      "histogram",
      "Time from receiving a request to sending its response, by method, route and status class.",
    );
    for (const [method, byRoute] of this.routes) {
      for (const [route, series] of byRoute) {
        series.byClass.forEach((histogram, i) => {
          histogram?.render(lines, "http_request_duration_seconds", routeLabels(method, route, i));
        });
      }
    }

    if (extras.queueDepths !== undefined) {
      family("recsys_jobs", "gauge", "Background jobs in the database, by queue and status.");
      for (const depth of extras.queueDepths) {
        lines.push(
          `recsys_jobs{queue="${escapeLabel(depth.queue)}",status="${escapeLabel(depth.status)}"} ${depth.jobs}`,
        );
      }
    }

    family("recsys_training_duration_seconds", "histogram", "Wall time of finished training runs.");
    this.training.render(lines, "recsys_training_duration_seconds", "");
    family("recsys_training_failures_total", "counter", "Training runs that failed.");
    lines.push(`recsys_training_failures_total ${this.trainingFailures[0]}`);

    family(
      "recsys_event_loop_delay_seconds",
      "histogram",
      "How late a 20 ms timer on the thread that answers requests fired: every request waits at least that long.",
    );
    this.loopDelay.render(lines, "recsys_event_loop_delay_seconds", "");

    family("recsys_snapshot_memory_bytes", "gauge", "Memory held by in-memory tenant snapshots.");
    let sum = 0;
    for (const bytes of this.snapshotBytes.values()) sum += bytes;
    lines.push(`recsys_snapshot_memory_bytes ${this.snapshotTotal ?? sum}`);
    family("recsys_snapshot_memory_bytes_by_account", "gauge", "Memory held by one account's snapshot.");
    for (const [account, bytes] of this.snapshotBytes) {
      lines.push(`recsys_snapshot_memory_bytes_by_account{account_id="${escapeLabel(account)}"} ${bytes}`);
    }
    family("recsys_snapshots_loaded", "gauge", "Tenant snapshots held in memory.");
    lines.push(`recsys_snapshots_loaded ${this.snapshotBytes.size}`);

    family("recsys_cache_requests_total", "counter", "Cache lookups by cache and result (hit or miss).");
    for (const [name, counters] of this.caches) {
      lines.push(`recsys_cache_requests_total{cache="${escapeLabel(name)}",result="hit"} ${counters[0]}`);
      lines.push(`recsys_cache_requests_total{cache="${escapeLabel(name)}",result="miss"} ${counters[1]}`);
    }

    if (extras.databaseUp !== undefined) {
      family("recsys_database_up", "gauge", "1 when the last background database probe succeeded.");
      lines.push(`recsys_database_up ${extras.databaseUp ? 1 : 0}`);
    }

    const memory = process.memoryUsage();
    family("process_resident_memory_bytes", "gauge", "Resident set size.");
    lines.push(`process_resident_memory_bytes ${memory.rss}`);
    family("process_heap_bytes", "gauge", "JavaScript heap, by kind (used or total).");
    lines.push(`process_heap_bytes{kind="used"} ${memory.heapUsed}`);
    lines.push(`process_heap_bytes{kind="total"} ${memory.heapTotal}`);
    family("process_external_memory_bytes", "gauge", "Memory outside the JavaScript heap (buffers, wasm).");
    lines.push(`process_external_memory_bytes ${memory.external}`);
    family("process_start_time_seconds", "gauge", "Start time of the process since the Unix epoch.");
    lines.push(`process_start_time_seconds ${Math.floor(this.startedAt)}`);
    // With WORKERS > 1 each scrape reaches one of several processes on the port: the pid says which.
    family("process_info", "gauge", "The process that answered this scrape.");
    lines.push(`process_info{pid="${process.pid}"} 1`);

    return `${lines.join("\n")}\n`;
  }
}

function routeLabels(method: string, route: string, statusClass: number): string {
  return `method="${escapeLabel(method)}",route="${escapeLabel(route)}",status_class="${STATUS_CLASSES[statusClass]}"`;
}

function escapeLabel(value: string): string {
  return value.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");
}
