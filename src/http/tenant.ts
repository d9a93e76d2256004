/**
 * The types every authenticated request carries: who the caller is (TenantContext), how a route accepts
 * callers (AuthMode, ApiScope) and the guards run after authentication. A leaf: use cases import it without
 * reaching the auth plugin or the composition root.
 */
export type AuthMode = "keyOrJwt" | "jwt" | "key" | "keyAndJwt";
export type ApiScope = "recommendations:read" | "interactions:write";
export const API_SCOPES: readonly ApiScope[] = ["recommendations:read", "interactions:write"];

export interface TenantContext {
  readonly accountId: number;
  /** The account as cached for authentication (see accounts/account-cache.ts). */
  readonly account: {
    id: number;
    name: string;
    plan: string;
    isActive: boolean;
    subscriptionStatus: string;
    createdAt: Date;
    /** True when a user of the account has verified its e-mail address. */
    emailVerified: boolean;
    /** Creation time of the account's first user: the e-mail grace period counts from it. */
    firstUserCreatedAt: Date | null;
  };
  readonly actor:
    | { type: "apiKey"; keyId: number; keyKind: "secret" | "publishable"; scopes: readonly string[] }
    | {
        type: "user";
        userId: number;
        email: string;
        isAdmin: boolean;
        jti: string;
        expiresAt: Date;
        apiKeyId?: number;
      };
  readonly requestId: string;
}

/** Guards run after authentication for every authenticated route (rate limits, plan/subscription, email grace). */
export type TenantGuard = (
  tenant: TenantContext,
  request: {
    method: string;
    route: string;
    mode: AuthMode;
    set: { headers: Record<string, string | number> };
  },
) => void | Promise<void>;

export interface AuthOptions {
  mode: AuthMode;
  /** The scope a publishable key must hold to call this route; routes without one refuse publishable keys. */
  scope?: ApiScope;
  /**
   * The route's own permission rule (403), run after authentication and the guards and before any value of
   * the request is checked: `body` is the body as sent, not yet validated (a refused body is an object with
   * none of the route's fields).
   */
  permission?: (tenant: TenantContext, body: unknown) => void;
}
