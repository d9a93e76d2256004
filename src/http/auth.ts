/**
 * The auth plugin every module uses: resolves the caller (API key and/or dashboard JWT, per route), builds
 * the TenantContext, runs the tenant guards and the route's own permission, then has the request's values
 * checked. It works in Elysia's `transform` phase, before any schema is validated, so 401 comes before 403
 * and both before 422 (or a 404 for an id out of range); it hands the tenant to the handler through `resolve`.
 *
 *   .use(authPlugin(deps))
 *   .get("/", ({ tenant }) => ..., { auth: { mode: "keyOrJwt" } })
 *   .post("/query", ..., { auth: { mode: "keyOrJwt", scope: "recommendations:read" } })
 */
import { sql } from "drizzle-orm";
import { Elysia } from "elysia";
import type { Config } from "../config";
import type { Database } from "../db/client";
import type { ResolvedKey } from "../modules/api-keys/key-cache";
import { hashApiKey, looksLikeApiKey } from "../modules/api-keys/key-material";
import { callerHost, hostAllowed, secureHost } from "../modules/api-keys/origins";
import { isPlatformAdmin } from "../modules/auth/admin";
import type { Identity } from "../modules/auth/identity";
import { verifyAccessToken } from "../modules/auth/tokens";
import { AppError } from "../shared/errors";
import { grantKeyOrigin } from "./cors";
import { checkValuesAfterAdmission, requestIdOf } from "./kernel";
import { markAuthenticatingHook } from "./request-values";
import type { AuthMode, AuthOptions, TenantContext, TenantGuard } from "./tenant";

// Origin matching lives with the keys' other origin rules (api-keys/origins.ts); kept importable from here.
export { hostAllowed };

const SECURITY: Record<AuthMode, Record<string, string[]>[]> = {
  keyOrJwt: [{ ApiKey: [] }, { BearerJWT: [] }],
  jwt: [{ BearerJWT: [] }],
  key: [{ ApiKey: [] }],
  keyAndJwt: [{ ApiKey: [], BearerJWT: [] }],
};

/** What the auth plugin reads from the app: the key and account caches, the guards, the store for last use. */
export interface AuthDeps {
  readonly config: Config;
  readonly database: Database;
  readonly identity: Identity;
  /** Run in order after authentication on every authenticated route. */
  readonly tenantGuards: readonly TenantGuard[];
}

const plugins = new WeakMap<AuthDeps, ReturnType<typeof buildAuthPlugin>>();

/** Memoised per deps so every module shares one instance (Elysia de-duplicates it by name). */
export function authPlugin(deps: AuthDeps) {
  let plugin = plugins.get(deps);
  if (plugin === undefined) {
    plugin = buildAuthPlugin(deps);
    plugins.set(deps, plugin);
  }
  return plugin;
}

/** What the plugin's transform reads of Elysia's context (destructured there: see kernel.ts on why). */
interface HookContext {
  request: Request;
  route: string;
  set: { headers: Record<string, string | number> };
  params: unknown;
  query: unknown;
  body: unknown;
}

/** The authenticated tenant rides on the Request from `transform` to `resolve` (see kernel.ts on why not a WeakMap). */
const TENANT = Symbol("tenant");
type WithTenant = Request & { [TENANT]?: TenantContext };

function buildAuthPlugin(deps: AuthDeps) {
  return new Elysia({ name: "auth" }).macro({
    auth: (options: AuthOptions) => ({
      // `x-publishable-scope` tells readers of the OpenAPI document which routes a publishable key may call.
      detail: {
        security: SECURITY[options.mode],
        ...(options.scope === undefined ? {} : { "x-publishable-scope": options.scope }),
      },
      transform: markAuthenticatingHook(async ({ request, route, set, params, query, body }: HookContext) => {
        const tenant =
          authenticateFromCache(deps, request, options) ?? (await authenticate(deps, request, options));
        const guardRequest = { method: request.method, route, mode: options.mode, set };
        for (const guard of deps.tenantGuards) {
          // Guards answer synchronously when they can; awaiting only real promises saves a turn each.
          const pending = guard(tenant, guardRequest);
          if (pending !== undefined) await pending;
        }
        options.permission?.(tenant, body);
        checkValuesAfterAdmission(request, params, query, body);
        (request as WithTenant)[TENANT] = tenant;
      }),
      resolve({ request }) {
        const tenant = (request as WithTenant)[TENANT];
        if (tenant === undefined) throw new AppError("INTERNAL_ERROR", "Request was not authenticated");
        return { tenant };
      },
    }),
  });
}

type KeyActor = Extract<TenantContext["actor"], { type: "apiKey" }>;
type UserActor = Extract<TenantContext["actor"], { type: "user" }>;

async function authenticate(deps: AuthDeps, request: Request, options: AuthOptions): Promise<TenantContext> {
  const apiKey = request.headers.get("x-api-key");
  const authorization = request.headers.get("authorization");
  const { mode } = options;

  let key: { actor: KeyActor; accountId: number } | undefined;
  let user: { actor: UserActor; accountId: number } | undefined;
  if (mode === "key" || mode === "keyAndJwt" || (mode === "keyOrJwt" && apiKey !== null)) {
    if (apiKey === null)
      throw new AppError("INVALID_API_KEY", "An API key is required in the X-API-Key header");
    key = await authenticateKey(deps, request, apiKey, options);
  }
  if (mode === "jwt" || mode === "keyAndJwt" || (mode === "keyOrJwt" && key === undefined)) {
    if (authorization === null) {
      throw mode === "keyOrJwt"
        ? new AppError("INVALID_API_KEY", "An API key (X-API-Key) or a bearer token is required")
        : new AppError("INVALID_TOKEN", "A bearer token is required in the Authorization header");
    }
    user = await authenticateUser(deps, authorization);
  }
  if (key !== undefined && user !== undefined && key.accountId !== user.accountId) {
    throw new AppError("FORBIDDEN", "The API key and the access token belong to different accounts");
  }

  const accountId = (key ?? user)?.accountId;
  if (accountId === undefined) throw new AppError("INVALID_API_KEY", "Authentication required");
  const account = await deps.identity.accounts.get(accountId);
  if (account === undefined) {
    throw key !== undefined
      ? new AppError("INVALID_API_KEY", "Invalid API key")
      : new AppError("TOKEN_REVOKED", "The access token is no longer valid");
  }
  if (!account.isActive) throw new AppError("FORBIDDEN", "This account is deactivated");

  const actor: TenantContext["actor"] =
    user !== undefined
      ? { ...user.actor, ...(key ? { apiKeyId: key.actor.keyId } : {}) }
      : (key as { actor: KeyActor }).actor;
  return { accountId, account, actor, requestId: requestIdOf(request) };
}

/**
 * The common case without waiting: an API-key request (no bearer token) whose key and account are both in
 * memory. Anything else (a token, a cache miss, a refusal to explain) is left to `authenticate`.
 */
function authenticateFromCache(
  deps: AuthDeps,
  request: Request,
  options: AuthOptions,
): TenantContext | undefined {
  if (options.mode !== "key" && options.mode !== "keyOrJwt") return undefined;
  const value = request.headers.get("x-api-key");
  if (value === null) return undefined;
  const trimmed = value.trim();
  if (!looksLikeApiKey(trimmed)) return undefined;
  const key = deps.identity.keys.cached(hashApiKey(trimmed));
  if (key === undefined) return undefined;
  const account = deps.identity.accounts.cached(key.accountId);
  if (account === undefined || !account.isActive) return undefined;
  return {
    accountId: key.accountId,
    account,
    actor: admitKey(deps, request, key, options),
    requestId: requestIdOf(request),
  };
}

async function authenticateKey(
  deps: AuthDeps,
  request: Request,
  value: string,
  options: AuthOptions,
): Promise<{ actor: KeyActor; accountId: number }> {
  const trimmed = value.trim();
  if (!looksLikeApiKey(trimmed)) throw new AppError("INVALID_API_KEY", "Invalid API key");
  const key = await deps.identity.keys.resolve(hashApiKey(trimmed));
  if (key === undefined) throw new AppError("INVALID_API_KEY", "Invalid API key");
  return { accountId: key.accountId, actor: admitKey(deps, request, key, options) };
}

/** A known key's own limits (a publishable key's scopes and origins), its use noted; the request's actor. */
function admitKey(deps: AuthDeps, request: Request, key: ResolvedKey, options: AuthOptions): KeyActor {
  if (key.kind === "publishable") {
    // Before the checks below, so a refusal to an allowed origin is readable by the page (CORS).
    grantKeyOrigin(request, (origin) => {
      const host = secureHost(origin);
      return host !== undefined && hostAllowed(host, key.allowedDomains);
    });
    if (options.scope === undefined || !key.scopes.includes(options.scope)) {
      throw new AppError(
        "INSUFFICIENT_SCOPE",
        options.scope === undefined
          ? "Publishable keys may not call this route; use a secret key"
          : `This publishable key lacks the scope ${options.scope}`,
      );
    }
    const host = callerHost(request);
    if (host === undefined || !hostAllowed(host, key.allowedDomains)) {
      throw new AppError("ORIGIN_NOT_ALLOWED", "This publishable key may not be used from this origin");
    }
  }
  deps.identity.lastUsed.touch(key.keyId);
  return { type: "apiKey", keyId: key.keyId, keyKind: key.kind, scopes: key.scopes };
}

interface SubjectRow {
  account_id: number;
  email: string;
  tokens_valid_after: Date | string;
  email_verified: boolean;
  revoked: boolean;
}

async function authenticateUser(
  deps: AuthDeps,
  authorization: string,
): Promise<{ actor: UserActor; accountId: number }> {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
  if (match?.[1] === undefined) throw new AppError("INVALID_TOKEN", "Expected Authorization: Bearer <token>");
  const claims = await verifyAccessToken(deps.config, match[1]);
  // One indexed read per dashboard request: revocation (logout, password change, deletion) is then exact in
  // every process with no cache to invalidate.
  const [row] = await deps.database.rows<SubjectRow>(
    sql`select u.account_id, u.email, u.tokens_valid_after, u.email_verified_at is not null as email_verified,
          exists(select 1 from revoked_tokens r where r.jti = ${claims.jti}) as revoked
        from system_users u where u.id = ${claims.userId}`,
  );
  if (
    row === undefined ||
    row.revoked ||
    Number(row.account_id) !== claims.accountId ||
    claims.issuedAtMs < new Date(row.tokens_valid_after).getTime()
  ) {
    throw new AppError("TOKEN_REVOKED", "The access token has been revoked");
  }
  return {
    accountId: claims.accountId,
    actor: {
      type: "user",
      userId: claims.userId,
      email: row.email,
      isAdmin: isPlatformAdmin(deps.config, row.email, row.email_verified),
      jti: claims.jti,
      expiresAt: claims.expiresAt,
    },
  };
}
