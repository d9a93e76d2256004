/** What a load run is asked to send and what it measured, whichever generator ran. */
export interface LoadRequest {
  method: "GET" | "POST";
  path: string;
  body?: string;
}

export interface LoadOptions {
  baseUrl: string;
  headers?: Record<string, string>;
  /** Requests are cycled in order, so each connection sees varied users and products. */
  requests: LoadRequest[];
  connections: number;
  durationSeconds: number;
  /** Hard cap on requests (autocannon only; wrk runs for the duration). */
  maxRequests: number;
  /** Send each request once and stop (first requests of users never seen); wrk only. */
  once?: boolean;
  /**
   * Each connection waits this long on average (exponentially distributed) before each request, so the
   * service is offered a steady rate below what it can take, as a shop's traffic is; wrk only.
   */
  thinkMs?: number;
  /** Force autocannon even where wrk is installed. */
  generator?: "autocannon";
}

export interface LoadResult {
  requests: number;
  seconds: number;
  rps: number;
  p50Ms: number;
  p99Ms: number;
  meanMs: number;
  errors: number;
  non2xx: number;
  firstError?: string;
  generator: "wrk" | "autocannon";
}
