/**
 * Shared security checks every endpoint's tests reuse: missing or garbage credentials, publishable keys on
 * routes they may not reach, and another tenant's ids.
 */
import { expect } from "bun:test";
import type { RequestOptions, TestContext } from "./context";
import { ALLOWED_ORIGIN, createKey, registerTenant } from "./tenant";

export interface SecurityCheckOptions {
  body?: unknown;
  query?: RequestOptions["query"];
  /** JWT-only routes answer INVALID_TOKEN when no bearer token is sent. */
  jwtOnly?: boolean;
  /** API-key-only routes answer INVALID_API_KEY even to a bearer token. */
  keyOnly?: boolean;
}

const GARBAGE_KEY = `sk_live_${"0".repeat(40)}`;

/**
 * No credentials → 401 INVALID_API_KEY (INVALID_TOKEN on JWT-only routes); a garbage token → 401 INVALID_TOKEN
 * (INVALID_API_KEY on key-only routes); a garbage key → 401 INVALID_API_KEY.
 */
export async function expectAuthRequired(
  ctx: TestContext,
  method: string,
  path: string,
  opts: SecurityCheckOptions = {},
): Promise<void> {
  const base = { body: opts.body, query: opts.query };
  const none = await ctx.request(method, path, base);
  expect(none.status).toBe(401);
  expect(none.body.errorCode).toBe(opts.jwtOnly ? "INVALID_TOKEN" : "INVALID_API_KEY");

  const garbageToken = await ctx.request(method, path, { ...base, token: "not.a.jwt" });
  expect(garbageToken.status).toBe(401);
  expect(garbageToken.body.errorCode).toBe(opts.keyOnly ? "INVALID_API_KEY" : "INVALID_TOKEN");

  if (!opts.jwtOnly) {
    const garbage = await ctx.request(method, path, { ...base, apiKey: GARBAGE_KEY });
    expect(garbage.status).toBe(401);
    expect(garbage.body.errorCode).toBe("INVALID_API_KEY");
  }
}

/** A publishable key (both scopes, called from its allowed origin) is refused with 403 INSUFFICIENT_SCOPE. */
export async function expectPublishableRefused(
  ctx: TestContext,
  method: string,
  path: string,
  opts: SecurityCheckOptions = {},
): Promise<void> {
  const tenant = await registerTenant(ctx);
  const { apiKey } = await createKey(ctx, tenant.token, { kind: "publishable" });
  const res = await ctx.request(method, path, {
    body: opts.body,
    query: opts.query,
    apiKey,
    headers: { origin: ALLOWED_ORIGIN },
  });
  expect(res.status).toBe(403);
  expect(res.body.errorCode).toBe("INSUFFICIENT_SCOPE");
}

/** Another tenant's secret key gets 404 NOT_FOUND for a path naming the first tenant's record. */
export async function expectOtherTenantNotFound(
  ctx: TestContext,
  method: string,
  path: string,
  opts: SecurityCheckOptions = {},
): Promise<void> {
  const stranger = await registerTenant(ctx);
  const res = await ctx.request(method, path, {
    body: opts.body,
    query: opts.query,
    apiKey: stranger.apiKey,
  });
  expect(res.status).toBe(404);
  expect(res.body.errorCode).toBe("NOT_FOUND");
}

/** None of the secrets occur in the text (a response body or the joined log lines). */
export function expectNoSecrets(text: string, secrets: readonly string[]): void {
  for (const secret of secrets) expect(text.includes(secret)).toBe(false);
}
