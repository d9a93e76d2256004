/**
 * Every call the dashboard makes to the service, typed from the service's own route schemas (type-only
 * imports: nothing of the server reaches the bundle). Swapping in a generated client changes this file only.
 */
import type { Static } from "@sinclair/typebox";
import type { AccountResponse } from "../../modules/accounts/schemas";
import type { Grouping, MetricsReport } from "../../modules/analytics/schemas";
import type { ApiKeyCreated, ApiKeyCreateInput, ApiKeyMetadataOutput } from "../../modules/api-keys/schemas";
import type { LoginResponse, RegisterInput, RegisterResponse } from "../../modules/auth/schemas";
import type { BillingSessionType } from "../../modules/billing/schemas";
import type { EndUser, EndUserExport, ErasureResult } from "../../modules/end-users/schemas";
import type {
  Experiment,
  ExperimentCreate,
  ExperimentList,
  ExperimentResults,
  ResultMetric,
} from "../../modules/experiments/schemas";
import type { BatchAccepted, BatchJobStatus, BatchRequest } from "../../modules/ingestion/schemas";
import type { Interaction } from "../../modules/interactions/schemas";
import type { PlanTableType } from "../../modules/plans/schemas";
import type { Product } from "../../modules/products/schemas";
import type {
  PersonalizedQuery,
  PresetBody,
  RecommendationPage,
} from "../../modules/recommendations/schemas";
import type { QuickStartResultType, ResetResultType, SandboxStatusType } from "../../modules/sandbox/schemas";
import type { UserOutput, UserUpdateInput } from "../../modules/system-users/schemas";
import type {
  ModelMetadataType,
  TrainingAcceptedType,
  TrainingJobStatusType,
} from "../../modules/training/schemas";
import type { UsagePointType, UsageSummaryType } from "../../modules/usage/schemas";

export type {
  BatchJobStatus,
  EndUser,
  EndUserExport,
  ErasureResult,
  Experiment,
  ExperimentCreate as NewExperiment,
  ExperimentResults,
  Grouping,
  Interaction,
  MetricsReport,
  ModelMetadataType as ModelMetadata,
  PersonalizedQuery,
  PlanTableType as PlanTable,
  Product,
  RecommendationPage,
  TrainingJobStatusType as TrainingJob,
  UsagePointType as UsagePoint,
  UsageSummaryType as UsageSummary,
  UserOutput as CurrentUser,
};
export type ApiKey = ApiKeyMetadataOutput;
export type CreatedApiKey = Static<typeof ApiKeyCreated>;
export type NewApiKey = ApiKeyCreateInput;

/** The account, with the specification's field names (`is_active`, `onboarding_checklist_status`, …). */
export type Account = Static<typeof AccountResponse>;

export interface Page<T> {
  items: T[];
  total: number;
  skip: number;
  limit: number;
}

export type Preset = "homepage" | "product-page" | "cart" | "checkout";

/** An error answer of the API: `message` is written for people, `requestId` is what support asks for. */
export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly errorCode: string,
    readonly requestId: string | null,
    /** The 422's invalid fields: `loc` is where the value was (`["body", "variants", 1, "traffic"]`). */
    readonly detail: { loc: (string | number)[]; msg: string }[] = [],
    /** Seconds the service asked to wait before trying again (Retry-After on 429 and 503), if it said. */
    readonly retryAfter: number | null = null,
  ) {
    super(message);
  }
}

const TOKEN_KEY = "rs-dashboard-token";

/** The signed-in user's JWT, kept for the browser tab's session. */
export const session = {
  token: (): string | null => sessionStorage.getItem(TOKEN_KEY),
  set: (token: string): void => sessionStorage.setItem(TOKEN_KEY, token),
  clear: (): void => sessionStorage.removeItem(TOKEN_KEY),
};

type Query = Record<string, string | number | boolean | string[] | undefined>;

interface CallOptions {
  body?: unknown;
  query?: Query;
  /** Sent as X-API-Key beside the session token (billing asks both). */
  apiKey?: string;
}

/** Listeners told when the session token is refused, so the app can return to the log-in page. */
const signedOut = new Set<() => void>();
export const onSignedOut = (listener: () => void): (() => void) => {
  signedOut.add(listener);
  return () => signedOut.delete(listener);
};

export function apiUrl(path: string, query: Query = {}): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value === undefined) continue;
    for (const one of Array.isArray(value) ? value : [value]) params.append(name, String(one));
  }
  const search = params.toString();
  return `/api/v1${path}${search === "" ? "" : `?${search}`}`;
}

/** Retry-After as delta seconds; the service never sends the HTTP-date form. */
function retryAfterSeconds(header: string | null): number | null {
  if (header === null || !/^\d+$/.test(header.trim())) return null;
  return Number(header.trim());
}

async function call<T>(method: string, path: string, options: CallOptions = {}): Promise<T> {
  const headers: Record<string, string> = { accept: "application/json" };
  const token = session.token();
  if (token !== null) headers.authorization = `Bearer ${token}`;
  if (options.apiKey !== undefined) headers["x-api-key"] = options.apiKey;
  if (options.body !== undefined) headers["content-type"] = "application/json";
  let response: Response;
  try {
    response = await fetch(apiUrl(path, options.query), {
      method,
      headers,
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
    });
  } catch {
    throw new ApiError("The service could not be reached. Check your connection and try again.", 0, "", null);
  }
  const text = await response.text();
  const parsed = text === "" ? undefined : (JSON.parse(text) as unknown);
  if (!response.ok) {
    const body = (parsed ?? {}) as { message?: string; errorCode?: string; requestId?: string; detail?: [] };
    const error = new ApiError(
      body.message ?? `The service answered ${response.status}.`,
      response.status,
      body.errorCode ?? "",
      body.requestId ?? response.headers.get("x-request-id"),
      body.detail ?? [],
      retryAfterSeconds(response.headers.get("retry-after")),
    );
    if (
      token !== null &&
      (error.errorCode === "INVALID_TOKEN" || error.errorCode === "TOKEN_REVOKED") &&
      options.apiKey === undefined
    ) {
      session.clear();
      for (const listener of signedOut) listener();
    }
    throw error;
  }
  return parsed as T;
}

/** A record id as one path segment; ids are taken decoded (see `useRecordId`) and encoded once, here. */
const segment = encodeURIComponent;

export const api = {
  register: (input: RegisterInput) =>
    call<Static<typeof RegisterResponse>>("POST", "/auth/register", { body: input }),
  logIn: (email: string, password: string) =>
    call<Static<typeof LoginResponse>>("POST", "/auth/token", { body: { email, password } }),
  logOut: () => call<{ message: string }>("POST", "/auth/logout"),
  sendVerification: () => call<{ message: string }>("POST", "/auth/send-verification-email"),
  me: () => call<UserOutput>("GET", "/system-users/me"),
  /** Name, e-mail or password; the last two need `currentPassword`, and a new password ends every session. */
  updateMe: (changes: UserUpdateInput) => call<UserOutput>("PUT", "/system-users/me", { body: changes }),
  deleteMe: () => call<void>("DELETE", "/system-users/me"),

  account: () => call<Account>("GET", "/accounts/current"),
  /** Sets the given checklist steps; the service merges them into the stored object. */
  updateChecklist: (changes: Record<string, unknown>) =>
    call<Account>("PATCH", "/accounts/current", { body: { onboarding_checklist_status: changes } }),
  /** Platform administrators only (ADMIN_EMAILS); anyone else is answered 403 ADMIN_REQUIRED. */
  renameAccount: (name: string) => call<Account>("PATCH", "/accounts/current", { body: { name } }),

  listKeys: () => call<ApiKey[]>("GET", "/api-keys/"),
  createKey: (input: NewApiKey) => call<CreatedApiKey>("POST", "/api-keys/", { body: input }),
  revokeKey: (id: number) => call<void>("DELETE", `/api-keys/${id}`),
  revokeAllKeys: () => call<void>("DELETE", "/api-keys/"),

  listProducts: (query: { skip?: number; limit?: number; category?: string }) =>
    call<Page<Product>>("GET", "/products/", { query }),
  product: (externalId: string) => call<Product>("GET", `/products/external/${segment(externalId)}`),
  similarProducts: (externalId: string, limit = 8) =>
    call<RecommendationPage>("GET", `/recommendations/products/external/${segment(externalId)}/similar`, {
      query: { limit, include_explanation: true },
    }),

  listEndUsers: (query: { skip?: number; limit?: number }) =>
    call<Page<EndUser>>("GET", "/end-users/", { query }),
  endUser: (externalId: string) => call<EndUser>("GET", `/end-users/external/${segment(externalId)}`),
  exportEndUser: (externalId: string) =>
    call<EndUserExport>("GET", `/end-users/external/${segment(externalId)}/export`),
  eraseEndUser: (externalId: string) =>
    call<ErasureResult>("DELETE", `/end-users/external/${segment(externalId)}`),
  listInteractions: (query: { skip?: number; limit?: number }) =>
    call<Page<Interaction>>("GET", "/interactions/", { query }),

  submitBatch: (batch: BatchRequest) =>
    call<Static<typeof BatchAccepted>>("POST", "/ingestion/batch", { body: batch }),
  batch: (jobId: number) => call<BatchJobStatus>("GET", `/ingestion/batch/${jobId}`),
  listBatches: (limit = 20) => call<BatchJobStatus[]>("GET", "/ingestion/batch", { query: { limit } }),

  train: () => call<TrainingAcceptedType>("POST", "/pipeline/train", { body: {} }),
  listTrainingJobs: (limit = 20) =>
    call<TrainingJobStatusType[]>("GET", "/pipeline/jobs", { query: { limit } }),
  trainingJob: (jobId: number) => call<TrainingJobStatusType>("GET", `/pipeline/jobs/${jobId}/status`),
  listModels: (limit = 50) => call<ModelMetadataType[]>("GET", "/pipeline/models", { query: { limit } }),
  /**
   * The latest trained model, or null before the first one. Read from the model list (newest first) rather
   * than /pipeline/status, whose 404 NO_MODEL a browser would log as a failed request on every new account.
   */
  currentModel: async (): Promise<ModelMetadataType | null> =>
    (await call<ModelMetadataType[]>("GET", "/pipeline/models", { query: { limit: 1 } }))[0] ?? null,

  personalized: (query: PersonalizedQuery) =>
    call<RecommendationPage>("POST", "/recommendations/personalized/query", { body: query }),
  preset: (preset: Preset, body: PresetBody, query: Query) =>
    call<RecommendationPage>("POST", `/recommendations/ecommerce/${preset}`, { body, query }),

  usageSummary: () => call<UsageSummaryType>("GET", "/usage/summary"),
  usagePoints: (startDate: string, endDate: string) =>
    call<UsagePointType[]>("GET", "/usage/", { query: { start_date: startDate, end_date: endDate } }),
  plans: () => call<PlanTableType>("GET", "/plans/"),

  /** The billing routes ask for an API key as well as the session (see the Usage and plan page). */
  checkout: (plan: string, apiKey: string, returnUrl: string) =>
    call<BillingSessionType>("POST", "/billing/create-checkout-session", {
      apiKey,
      body: { plan, successUrl: returnUrl, cancelUrl: returnUrl },
    }),
  subscribe: (plan: string, apiKey: string, returnUrl: string) =>
    call<BillingSessionType>("POST", "/billing/create-subscription-session", {
      apiKey,
      body: { plan, successUrl: returnUrl, cancelUrl: returnUrl },
    }),
  portal: (apiKey: string, returnUrl: string) =>
    call<{ provider: string; url: string }>("POST", "/billing/create-portal-session", {
      apiKey,
      body: { returnUrl },
    }),

  /** Online results: impressions, clicks, carts, purchases and their rates over the last 30 days. */
  recommendationMetrics: (groupBy: Grouping) =>
    call<MetricsReport>("GET", "/analytics/recommendations", { query: { group_by: groupBy } }),

  /** A/B experiments, newest first; one's per-arm results and sequential verdict; starting and stopping one. */
  experiments: () => call<Static<typeof ExperimentList>>("GET", "/experiments/"),
  experimentResults: (id: number, metric: ResultMetric = "ctr") =>
    call<ExperimentResults>("GET", `/experiments/${id}/results`, { query: { metric } }),
  /** Creating an experiment starts it: there is no separate start. */
  createExperiment: (input: ExperimentCreate) => call<Experiment>("POST", "/experiments/", { body: input }),
  stopExperiment: (id: number) => call<Experiment>("POST", `/experiments/${id}/stop`),

  sandboxStatus: () => call<SandboxStatusType>("GET", "/sandbox/status"),
  quickStart: () => call<QuickStartResultType>("POST", "/sandbox/quick-start"),
  resetSandbox: () => call<ResetResultType>("POST", "/sandbox/reset"),
};
