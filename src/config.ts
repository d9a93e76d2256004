/**
 * Settings, parsed once at boot into a frozen object. Nothing else in the service reads `process.env`.
 * A bad value stops start-up with a ConfigError naming the setting.
 */
import { randomBytes } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { isIP } from "node:net";
import { availableParallelism } from "node:os";
import { dirname, isAbsolute, join, resolve } from "node:path";
import pkg from "../package.json" with { type: "json" };
import type { NativeKernelSettings } from "./engine/native";
import type { LogLevel } from "./shared/logger";

export type PaymentProviderName = "local" | "mercadopago";

/**
 * Which proxies may speak for the client (TRUST_PROXY): the number of proxy hops in front of the service,
 * or the proxies' own addresses. Absent: X-Forwarded-For is ignored and the client is the socket's peer.
 */
export type TrustProxy = { readonly hops: number } | { readonly addresses: readonly string[] };

export interface Config {
  readonly version: string;
  readonly port: number;
  readonly host: string;
  readonly dataDir: string;
  /** Absent: the embedded PGlite store under dataDir. */
  readonly databaseUrl: string | undefined;
  readonly redisUrl: string | undefined;
  /** Prefix of every Redis key this service writes (REDIS_KEY_PREFIX), so deployments can share a server. */
  readonly redisKeyPrefix: string;
  readonly tls: { readonly certFile: string; readonly keyFile: string } | undefined;
  readonly jwtSecret: Uint8Array;
  readonly jwtTtlSeconds: number;
  readonly publicBaseUrl: string;
  readonly adminEmails: readonly string[];
  readonly smtpUrl: string | undefined;
  readonly plansFile: string | undefined;
  /** Absent: billing is not configured (session routes answer 503 BILLING_NOT_CONFIGURED). */
  readonly paymentProvider: PaymentProviderName | undefined;
  readonly paymentWebhookSecret: string;
  readonly mercadopagoAccessToken: string | undefined;
  readonly mercadopagoApiUrl: string;
  readonly metricsToken: string | undefined;
  readonly logLevel: LogLevel;
  /** Sign-ups per client address per hour (SIGNUP_LIMIT_PER_HOUR); 0 = no limit. */
  readonly signupLimitPerHour: number;
  readonly trustProxy: TrustProxy | undefined;
  /** A cap on every plan's trainingsPerDay (TRAININGS_PER_DAY); unset, the plan table alone decides. */
  readonly trainingsPerDay: number | undefined;
  /**
   * The retraining the service starts after end-user erasures: how often it looks for accounts due
   * (ERASURE_RETRAIN_SWEEP_SECONDS) and how long after an account's latest erasure it waits
   * (ERASURE_RETRAIN_DEBOUNCE_SECONDS). Both at most 6 hours, so a model is retrained well within 24.
   */
  readonly erasureRetraining: { readonly sweepSeconds: number; readonly debounceSeconds: number };
  /** Number of background job workers in this process (JOB_CONCURRENCY); 0 disables the job runner. */
  readonly jobConcurrency: number;
  /** Records per bulk-ingestion chunk, each chunk one transaction (INGESTION_CHUNK_SIZE). */
  readonly ingestionChunkSize: number;
  /** Memory bound of the per-process tenant snapshot cache, in MiB (SNAPSHOT_CACHE_MB). */
  readonly snapshotCacheMb: number;
  /** File the embedded store's thread appends its time per kind of statement to (EMBEDDED_STORE_TIMINGS). */
  readonly embeddedStoreTimings: string | undefined;
  /** Server processes sharing the port (WORKERS; `auto` = cores): the first one starts the others. */
  readonly workers: number;
  /** 0 in the process started by the operator; 1..workers-1 in the ones it started (RS_WORKER_INDEX). */
  readonly workerIndex: number;
  /** Origins (`scheme://host[:port]`) granted CORS on every route (CORS_ORIGINS); publishable keys need none. */
  readonly corsOrigins: readonly string[];
  /** How the C kernels load (RECSYS_NATIVE, CC), on this thread and in every training worker it starts. */
  readonly nativeKernels: NativeKernelSettings;
}

export class ConfigError extends Error {
  constructor(
    readonly setting: string,
    reason: string,
  ) {
    super(`Invalid setting ${setting}: ${reason}`);
    this.name = "ConfigError";
  }
}

type Env = Record<string, string | undefined>;

const LOG_LEVELS: readonly LogLevel[] = ["debug", "info", "warn", "error", "silent"];
const MIN_SECRET_BYTES = 32;

export function loadConfig(env: Env = process.env): Config {
  const read = (name: string): string | undefined => {
    const value = env[name]?.trim();
    return value === undefined || value === "" ? undefined : value;
  };

  const port = parseInteger("PORT", read("PORT") ?? "8000", 0, 65535);
  const host = read("HOST") ?? "0.0.0.0";
  const dataDir = resolve(read("DATA_DIR") ?? "./data");
  ensureDirectory("DATA_DIR", dataDir);

  const databaseUrl = read("DATABASE_URL");
  if (databaseUrl !== undefined) requireUrl("DATABASE_URL", databaseUrl, ["postgres:", "postgresql:"]);
  const redisUrl = read("REDIS_URL");
  if (redisUrl !== undefined) requireUrl("REDIS_URL", redisUrl, ["redis:", "rediss:"]);
  const redisKeyPrefix = read("REDIS_KEY_PREFIX") ?? "rs:";
  if (!/^[A-Za-z0-9:_.-]{1,64}$/.test(redisKeyPrefix)) {
    throw new ConfigError("REDIS_KEY_PREFIX", "use 1-64 letters, digits, ':', '_', '.' or '-'");
  }

  const certFile = read("TLS_CERT_FILE");
  const keyFile = read("TLS_KEY_FILE");
  if ((certFile === undefined) !== (keyFile === undefined)) {
    throw new ConfigError(
      certFile === undefined ? "TLS_CERT_FILE" : "TLS_KEY_FILE",
      "set both TLS_CERT_FILE and TLS_KEY_FILE",
    );
  }
  if (certFile !== undefined) requireReadableFile("TLS_CERT_FILE", certFile);
  if (keyFile !== undefined) requireReadableFile("TLS_KEY_FILE", keyFile);
  const tls = certFile !== undefined && keyFile !== undefined ? { certFile, keyFile } : undefined;

  const jwtSecretText = read("JWT_SECRET") ?? persistedSecret(dataDir, "jwt-secret");
  if (Buffer.byteLength(jwtSecretText) < MIN_SECRET_BYTES) {
    throw new ConfigError("JWT_SECRET", `must be at least ${MIN_SECRET_BYTES} bytes`);
  }

  const publicBaseUrl = (read("PUBLIC_BASE_URL") ?? defaultBaseUrl(tls !== undefined, port)).replace(
    /\/+$/,
    "",
  );
  requireUrl("PUBLIC_BASE_URL", publicBaseUrl, ["http:", "https:"]);

  const adminEmails = (read("ADMIN_EMAILS") ?? "")
    .split(",")
    .map((email) => email.trim().toLowerCase())
    .filter((email) => email !== "");
  for (const email of adminEmails) {
    if (!/^[^@\s]+@[^@\s]+$/.test(email))
      throw new ConfigError("ADMIN_EMAILS", `"${email}" is not an email address`);
  }

  const smtpUrl = read("SMTP_URL");
  if (smtpUrl !== undefined) requireUrl("SMTP_URL", smtpUrl, ["smtp:", "smtps:"]);

  const plansFile = read("PLANS_FILE");
  if (plansFile !== undefined) requireReadableFile("PLANS_FILE", plansFile);

  const paymentProvider = read("PAYMENT_PROVIDER");
  if (paymentProvider !== undefined && paymentProvider !== "local" && paymentProvider !== "mercadopago") {
    throw new ConfigError("PAYMENT_PROVIDER", 'must be "local" or "mercadopago"');
  }
  const mercadopagoAccessToken = read("MERCADOPAGO_ACCESS_TOKEN");
  if (paymentProvider === "mercadopago" && mercadopagoAccessToken === undefined) {
    throw new ConfigError("MERCADOPAGO_ACCESS_TOKEN", "is required when PAYMENT_PROVIDER=mercadopago");
  }
  const mercadopagoApiUrl = (read("MERCADOPAGO_API_URL") ?? "https://api.mercadopago.com").replace(
    /\/+$/,
    "",
  );
  requireUrl("MERCADOPAGO_API_URL", mercadopagoApiUrl, ["http:", "https:"]);
  const paymentWebhookSecret =
    read("PAYMENT_WEBHOOK_SECRET") ?? persistedSecret(dataDir, "payment-webhook-secret");
  // A short secret can be brute-forced offline from one signed webhook.
  if (Buffer.byteLength(paymentWebhookSecret) < MIN_SECRET_BYTES) {
    throw new ConfigError("PAYMENT_WEBHOOK_SECRET", `must be at least ${MIN_SECRET_BYTES} bytes`);
  }

  const logLevel = (read("LOG_LEVEL") ?? "info").toLowerCase();
  if (!LOG_LEVELS.includes(logLevel as LogLevel)) {
    throw new ConfigError("LOG_LEVEL", `must be one of ${LOG_LEVELS.join(", ")}`);
  }

  const workers = parseWorkers(read("WORKERS"));
  if (workers > 1 && databaseUrl === undefined) {
    throw new ConfigError(
      "WORKERS",
      "more than one worker needs DATABASE_URL: the embedded database belongs to a single process",
    );
  }
  const workerIndex = parseInteger("RS_WORKER_INDEX", read("RS_WORKER_INDEX") ?? "0", 0, workers - 1);

  const corsOrigins = parseOrigins("CORS_ORIGINS", read("CORS_ORIGINS") ?? "");

  return Object.freeze({
    version: pkg.version,
    port,
    host,
    dataDir,
    databaseUrl,
    redisUrl,
    redisKeyPrefix,
    tls,
    jwtSecret: new TextEncoder().encode(jwtSecretText),
    jwtTtlSeconds: parseInteger("JWT_TTL_SECONDS", read("JWT_TTL_SECONDS") ?? "3600", 60, 86400 * 30),
    publicBaseUrl,
    adminEmails: Object.freeze(adminEmails),
    smtpUrl,
    plansFile,
    paymentProvider,
    paymentWebhookSecret,
    mercadopagoAccessToken,
    mercadopagoApiUrl,
    metricsToken: read("METRICS_TOKEN"),
    logLevel: logLevel as LogLevel,
    signupLimitPerHour: parseInteger(
      "SIGNUP_LIMIT_PER_HOUR",
      read("SIGNUP_LIMIT_PER_HOUR") ?? "20",
      0,
      1_000_000,
    ),
    trustProxy: parseTrustProxy(read("TRUST_PROXY")),
    trainingsPerDay: optionalInteger("TRAININGS_PER_DAY", read("TRAININGS_PER_DAY"), 1, 100000),
    erasureRetraining: Object.freeze({
      sweepSeconds: parseInteger(
        "ERASURE_RETRAIN_SWEEP_SECONDS",
        read("ERASURE_RETRAIN_SWEEP_SECONDS") ?? "600",
        10,
        MAX_ERASURE_RETRAIN_WAIT_SECONDS,
      ),
      debounceSeconds: parseInteger(
        "ERASURE_RETRAIN_DEBOUNCE_SECONDS",
        read("ERASURE_RETRAIN_DEBOUNCE_SECONDS") ?? "900",
        0,
        MAX_ERASURE_RETRAIN_WAIT_SECONDS,
      ),
    }),
    jobConcurrency: parseInteger("JOB_CONCURRENCY", read("JOB_CONCURRENCY") ?? "1", 0, 64),
    ingestionChunkSize: parseInteger("INGESTION_CHUNK_SIZE", read("INGESTION_CHUNK_SIZE") ?? "1000", 1, 5000),
    snapshotCacheMb: parseInteger("SNAPSHOT_CACHE_MB", read("SNAPSHOT_CACHE_MB") ?? "1024", 1, 1_048_576),
    embeddedStoreTimings: storeTimingsPath(read("EMBEDDED_STORE_TIMINGS")),
    workers,
    workerIndex,
    corsOrigins: Object.freeze(corsOrigins),
    nativeKernels: loadNativeKernelSettings(env),
  });
}

const MAX_WORKERS = 256;
/** Sweep interval and debounce together leave more than half of the contract's 24 hours to the training. */
const MAX_ERASURE_RETRAIN_WAIT_SECONDS = 6 * 3600;

/**
 * The native-kernel settings alone: `--self-check` reports on the kernels without the rest of the config
 * (it must not touch DATA_DIR, where a missing JWT_SECRET would be generated).
 */
export function loadNativeKernelSettings(env: Env = process.env): NativeKernelSettings {
  const enabled = env["RECSYS_NATIVE"]?.trim() ?? "";
  if (!["", "0", "1"].includes(enabled))
    throw new ConfigError("RECSYS_NATIVE", "use 0 (off) or 1 (on, the default)");
  return Object.freeze({ enabled: enabled !== "0", compiler: env["CC"]?.trim() || "cc" });
}

function parseWorkers(text: string | undefined): number {
  if (text === undefined) return 1;
  if (text.toLowerCase() === "auto") return Math.min(availableParallelism(), MAX_WORKERS);
  return parseInteger("WORKERS", text, 1, MAX_WORKERS);
}

/** A comma list of exact origins; `*` and values with a path are refused, since a grant must name its origin. */
function parseOrigins(name: string, text: string): string[] {
  const origins = text
    .split(",")
    .map((value) => value.trim().replace(/\/+$/, ""))
    .filter((value) => value !== "");
  for (const origin of origins) {
    let url: URL | undefined;
    try {
      url = new URL(origin);
    } catch {
      url = undefined;
    }
    if (
      url === undefined ||
      (url.protocol !== "https:" && url.protocol !== "http:") ||
      url.origin !== origin
    ) {
      throw new ConfigError(name, `"${origin}" is not an origin such as https://admin.example.com`);
    }
  }
  return [...new Set(origins)];
}

function parseInteger(name: string, text: string, min: number, max: number): number {
  if (!/^\d+$/.test(text)) throw new ConfigError(name, `"${text}" is not a whole number`);
  const value = Number(text);
  if (value < min || value > max) throw new ConfigError(name, `must be between ${min} and ${max}`);
  return value;
}

function optionalInteger(
  name: string,
  text: string | undefined,
  min: number,
  max: number,
): number | undefined {
  return text === undefined ? undefined : parseInteger(name, text, min, max);
}

function parseTrustProxy(text: string | undefined): TrustProxy | undefined {
  if (text === undefined) return undefined;
  if (/^\d+$/.test(text)) {
    const hops = parseInteger("TRUST_PROXY", text, 0, 10);
    return hops === 0 ? undefined : { hops };
  }
  const addresses = text
    .split(",")
    .map((address) => address.trim().toLowerCase())
    .filter((address) => address !== "");
  for (const address of addresses) {
    if (isIP(address) === 0) {
      throw new ConfigError("TRUST_PROXY", `"${address}" is neither a hop count nor an IP address`);
    }
  }
  return { addresses: Object.freeze(addresses) };
}

/** EMBEDDED_STORE_TIMINGS: a file in a directory that exists (the store's thread appends to it). */
function storeTimingsPath(path: string | undefined): string | undefined {
  if (path === undefined) return undefined;
  if (!existsSync(dirname(resolve(path)))) {
    throw new ConfigError("EMBEDDED_STORE_TIMINGS", "must name a file in a directory that exists");
  }
  return path;
}

function requireUrl(name: string, text: string, protocols: string[]): void {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new ConfigError(name, "is not a valid URL");
  }
  if (!protocols.includes(url.protocol))
    throw new ConfigError(name, `must start with ${protocols.join(" or ")}//`);
}

function requireReadableFile(name: string, path: string): void {
  try {
    readFileSync(path);
  } catch {
    throw new ConfigError(name, `cannot read file ${path}`);
  }
}

function ensureDirectory(name: string, path: string): void {
  try {
    mkdirSync(path, { recursive: true });
  } catch (error) {
    throw new ConfigError(name, `cannot create directory ${path}: ${(error as Error).message}`);
  }
}

function defaultBaseUrl(tls: boolean, port: number): string {
  return `${tls ? "https" : "http"}://localhost:${port}`;
}

/** A secret generated on first start and kept under DATA_DIR, so tokens and signatures survive restarts. */
function persistedSecret(dataDir: string, file: string): string {
  const path = isAbsolute(file) ? file : join(dataDir, file);
  if (existsSync(path)) return readFileSync(path, "utf8").trim();
  const secret = randomBytes(48).toString("base64url");
  writeFileSync(path, `${secret}\n`, { mode: 0o600 });
  chmodSync(path, 0o600);
  return secret;
}
