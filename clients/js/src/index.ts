/**
 * A typed client for the recommendation service. Every route of the service is callable through
 * `request(method, path, …)`, typed from the service's own OpenAPI document (src/generated/openapi.ts);
 * helpers name the common calls. Runs wherever `fetch` does: Bun, Node 20+, browsers.
 *
 *   const recs = new RecsClient({ baseUrl: "https://recs.example", apiKey: "sk_live_…" });
 *   const page = await recs.recommendations.homepage("u42");
 */
import {
  type ErrorCode,
  errorCodeForStatus,
  RecsApiError,
  RecsNetworkError,
  type ValidationIssue,
} from "./errors";
import type { components, operations, paths } from "./generated/openapi";

export type { components, ErrorCode, operations, paths, ValidationIssue };
export { RecsApiError, RecsNetworkError };

export type HttpMethod = "get" | "put" | "post" | "delete" | "patch";

/** The paths that have method M. */
export type PathsFor<M extends HttpMethod> = {
  [P in keyof paths]: paths[P] extends { [K in M]: object } ? P : never;
}[keyof paths];

/** The operation behind method M on path P. */
export type Operation<M extends HttpMethod, P extends PathsFor<M>> = paths[P] extends { [K in M]: infer O }
  ? O
  : never;

type Parameters_<O> = O extends { parameters: infer X } ? X : never;
type PathParameters<O> = Parameters_<O> extends { path: infer X } ? X : never;
type QueryParameters<O> = Parameters_<O> extends { query?: infer X } ? Exclude<X, undefined> : never;
type JsonBody<O> = O extends { requestBody?: { content: { "application/json": infer B } } } ? B : never;

type PathOption<O> = [PathParameters<O>] extends [never] ? { path?: undefined } : { path: PathParameters<O> };
type QueryOption<O> = [QueryParameters<O>] extends [never]
  ? { query?: undefined }
  : { query?: QueryParameters<O> };
type BodyOption<O> = [JsonBody<O>] extends [never]
  ? { body?: undefined }
  : O extends { requestBody: object }
    ? { body: JsonBody<O> }
    : { body?: JsonBody<O> };

/** What a call takes: path parameters (when the path has some), query, JSON body, extra headers, a signal. */
export type RequestOptions<O> = PathOption<O> &
  QueryOption<O> &
  BodyOption<O> & { headers?: Record<string, string>; signal?: AbortSignal };

type Success = 200 | 201 | 202 | 207;
type JsonOf<R> = R extends { content: { "application/json": infer J } } ? J : undefined;
/** The JSON body of a successful answer (undefined for 204 No Content). */
export type ResponseOf<O> = O extends { responses: infer R }
  ? { [C in keyof R]: C extends Success ? JsonOf<R[C]> : C extends 204 ? undefined : never }[keyof R]
  : never;

type Args<O> =
  object extends RequestOptions<O> ? [options?: RequestOptions<O>] : [options: RequestOptions<O>];

type ItemOf<R> = R extends { items: (infer I)[]; total: string | number } ? I : never;
/** GET paths answering a `{items, total, skip, limit}` page: what `paginate` walks. */
export type PagedPath = {
  [P in PathsFor<"get">]: [ItemOf<ResponseOf<Operation<"get", P>>>] extends [never] ? never : P;
}[PathsFor<"get">];

export interface RetryPolicy {
  /** Further attempts after a 429 or 503 answer (default 2). */
  retries?: number;
  /** The longest wait before one retry (default 10 s): a longer Retry-After is not waited for. */
  maxDelayMs?: number;
}

export interface RecsClientOptions {
  /** The service's address, e.g. https://recs.example (no trailing /api/v1). */
  baseUrl: string;
  /** Sent as X-API-Key: a secret key (servers) or a publishable key (browsers). */
  apiKey?: string;
  /** A dashboard user's JWT, sent as Authorization: Bearer. */
  token?: string;
  /** Retries on 429/503 honouring Retry-After; `false` turns them off. */
  retry?: RetryPolicy | false;
  /** Another fetch (a proxy agent, a test double); by default the global one. */
  fetch?: typeof fetch;
}

const DEFAULT_RETRY: Required<RetryPolicy> = { retries: 2, maxDelayMs: 10_000 };

export class RecsClient {
  readonly baseUrl: string;
  private readonly options: RecsClientOptions;
  private readonly fetchImpl: typeof fetch;

  constructor(options: RecsClientOptions) {
    this.options = options;
    this.baseUrl = options.baseUrl.replace(/\/+$/, "");
    // Bound: browsers refuse `window.fetch` called as a method of another object.
    this.fetchImpl = options.fetch ?? globalThis.fetch.bind(globalThis);
  }

  /** The same client with other credentials (e.g. after `auth.login`). */
  withAuth(auth: { apiKey?: string; token?: string }): RecsClient {
    return new RecsClient({ ...this.options, apiKey: auth.apiKey, token: auth.token });
  }

  /** Calls any route of the service, typed by its method and path. */
  async request<M extends HttpMethod, P extends PathsFor<M>>(
    method: M,
    path: P,
    ...[options]: Args<Operation<M, P>>
  ): Promise<ResponseOf<Operation<M, P>>> {
    const call = (options ?? {}) as {
      path?: Record<string, string | number>;
      query?: Record<string, unknown>;
      body?: unknown;
      headers?: Record<string, string>;
      signal?: AbortSignal;
    };
    const url = this.url(path, call.path, call.query);
    const headers: Record<string, string> = { accept: "application/json", ...call.headers };
    if (this.options.apiKey !== undefined) headers["x-api-key"] = this.options.apiKey;
    if (this.options.token !== undefined) headers.authorization = `Bearer ${this.options.token}`;
    let body: string | undefined;
    if (call.body !== undefined) {
      body = JSON.stringify(call.body);
      headers["content-type"] = "application/json";
    }
    const init: RequestInit = { method: method.toUpperCase(), headers, body, signal: call.signal };
    const response = await this.send(url, init);
    if (response.status === 204) return undefined as ResponseOf<Operation<M, P>>;
    const text = await response.text();
    return (text === "" ? undefined : JSON.parse(text)) as ResponseOf<Operation<M, P>>;
  }

  /**
   * Every item of a paged list, fetching `pageSize` at a time (default 100) as the loop asks for them:
   *   for await (const product of recs.paginate("/api/v1/products/")) …
   */
  async *paginate<P extends PagedPath>(
    path: P,
    options: {
      path?: PathParameters<Operation<"get", P>>;
      query?: Omit<Exclude<QueryParameters<Operation<"get", P>>, undefined>, "skip" | "limit">;
      pageSize?: number;
      signal?: AbortSignal;
    } = {},
  ): AsyncGenerator<ItemOf<ResponseOf<Operation<"get", P>>>, void, undefined> {
    const limit = options.pageSize ?? 100;
    let skip = 0;
    for (;;) {
      const page = (await (this.request as (...args: unknown[]) => Promise<unknown>)("get", path, {
        path: options.path,
        query: { ...(options.query as object), skip, limit },
        signal: options.signal,
      })) as { items: ItemOf<ResponseOf<Operation<"get", P>>>[]; total: string | number };
      yield* page.items;
      skip += page.items.length;
      if (page.items.length === 0 || skip >= Number(page.total)) return;
    }
  }

  readonly auth = {
    /** A JWT for a dashboard user; use it with `withAuth({ token })`. */
    login: (email: string, password: string) =>
      this.request("post", "/api/v1/auth/token", { body: { email, password } }),
  };

  readonly recommendations = {
    personalized: (body: JsonBody<Operation<"post", "/api/v1/recommendations/personalized/query">>) =>
      this.request("post", "/api/v1/recommendations/personalized/query", { body }),
    homepage: (userId: string, limit?: number) =>
      this.request("post", "/api/v1/recommendations/ecommerce/homepage", {
        body: { external_user_id: userId, limit },
      }),
    productPage: (userId: string, productId: string, limit?: number) =>
      this.request("post", "/api/v1/recommendations/ecommerce/product-page", {
        query: { current_product_id: productId },
        body: { external_user_id: userId, limit },
      }),
    cart: (userId: string, cartItems: string[], limit?: number) =>
      this.request("post", "/api/v1/recommendations/ecommerce/cart", {
        query: { cart_items: cartItems },
        body: { external_user_id: userId, limit },
      }),
    checkout: (userId: string, orderValue?: number, limit?: number) =>
      this.request("post", "/api/v1/recommendations/ecommerce/checkout", {
        query: { order_value: orderValue },
        body: { external_user_id: userId, limit },
      }),
    similar: (productId: string, query?: { skip?: number; limit?: number }) =>
      this.request("get", "/api/v1/recommendations/products/external/{external_product_id}/similar", {
        path: { external_product_id: productId },
        query,
      }),
  };

  readonly interactions = {
    record: (body: JsonBody<Operation<"post", "/api/v1/interactions/">>) =>
      this.request("post", "/api/v1/interactions/", { body }),
  };

  private url(
    path: string,
    params: Record<string, string | number> | undefined,
    query?: Record<string, unknown>,
  ) {
    const filled = path.replace(/\{([^}]+)\}/g, (_, name: string) => {
      const value = params?.[name];
      if (value === undefined) throw new TypeError(`missing path parameter ${name} for ${path}`);
      return encodeURIComponent(String(value));
    });
    const search = new URLSearchParams();
    for (const [key, value] of Object.entries(query ?? {})) {
      if (value === undefined || value === null) continue;
      if (Array.isArray(value)) for (const item of value) search.append(key, String(item));
      else search.append(key, String(value));
    }
    const text = search.toString();
    return `${this.baseUrl}${filled}${text === "" ? "" : `?${text}`}`;
  }

  private async send(url: string, init: RequestInit): Promise<Response> {
    const policy =
      this.options.retry === false
        ? { retries: 0, maxDelayMs: 0 }
        : { ...DEFAULT_RETRY, ...this.options.retry };
    for (let attempt = 0; ; attempt++) {
      let response: Response;
      try {
        response = await this.fetchImpl(url, init);
      } catch (error) {
        if ((error as { name?: string })?.name === "AbortError") throw error;
        throw new RecsNetworkError(url, error);
      }
      if (response.ok) return response;
      const error = await toApiError(response);
      const retryable = response.status === 429 || response.status === 503;
      const delay = error.retryAfter !== undefined ? error.retryAfter * 1000 : 250 * 2 ** attempt;
      if (!retryable || attempt >= policy.retries || delay > policy.maxDelayMs) throw error;
      await sleep(delay, init.signal ?? undefined);
    }
  }
}

async function toApiError(response: Response): Promise<RecsApiError> {
  const text = await response.text();
  let body: { message?: string; errorCode?: string; requestId?: string; detail?: ValidationIssue[] } = {};
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed === "object" && parsed !== null) body = parsed;
  } catch {
    // Not our JSON body (a proxy's page): keep the status and what the headers say.
  }
  return new RecsApiError(
    response.status,
    body.message ?? `HTTP ${response.status}`,
    (body.errorCode as ErrorCode | undefined) ?? errorCodeForStatus(response.status),
    body.requestId ?? response.headers.get("x-request-id") ?? "",
    body.detail,
    retryAfterSeconds(response.headers.get("retry-after")),
  );
}

/** Retry-After as seconds or an HTTP date; undefined when absent or unreadable. */
function retryAfterSeconds(value: string | null): number | undefined {
  if (value === null) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - Date.now()) / 1000));
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener(
      "abort",
      () => {
        clearTimeout(timer);
        reject(signal.reason);
      },
      { once: true },
    );
  });
}
