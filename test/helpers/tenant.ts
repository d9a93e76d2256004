/**
 * Tenants for tests: each test signs up its own account through the real API.
 */
import { expect } from "bun:test";
import type { TestContext } from "./context";

export interface Tenant {
  accountId: number;
  userId: number;
  email: string;
  password: string;
  /** The user's access token (JWT). */
  token: string;
  /** The secret sk_live_ key returned by register. */
  apiKey: string;
}

export interface RegisterOverrides {
  email?: string;
  password?: string;
  accountName?: string;
}

let counter = 0;

export const uniqueEmail = (label = "user"): string =>
  `${label}-${Date.now().toString(36)}-${(++counter).toString(36)}-${crypto.randomUUID().slice(0, 8)}@example.com`;

export async function registerTenant(ctx: TestContext, overrides: RegisterOverrides = {}): Promise<Tenant> {
  const email = overrides.email ?? uniqueEmail();
  const password = overrides.password ?? "correct horse battery staple";
  const res = await ctx.request("POST", "/api/v1/auth/register", {
    body: { accountName: overrides.accountName ?? "Test shop", email, password },
  });
  if (res.status !== 200) throw new Error(`register failed: ${res.status} ${res.text}`);
  return {
    accountId: res.body.accountId,
    userId: res.body.userId,
    email: email.toLowerCase(),
    password,
    token: res.body.accessToken,
    apiKey: res.body.apiKey,
  };
}

/** The browser origin `createKey` allows publishable keys from by default. */
export const ALLOWED_ORIGIN = "https://shop.example.com";

export interface CreateKeyOptions {
  kind?: "secret" | "publishable";
  scopes?: string[];
  /** Publishable keys default to ["shop.example.com"] (see ALLOWED_ORIGIN). */
  allowedDomains?: string[];
  name?: string;
}

export async function createKey(
  ctx: TestContext,
  token: string,
  options: CreateKeyOptions = {},
): Promise<{ id: number; apiKey: string }> {
  const kind = options.kind ?? "secret";
  const body: Record<string, unknown> = { name: options.name ?? `${kind} key`, kind };
  if (options.scopes !== undefined) body.scopes = options.scopes;
  if (kind === "publishable") body.allowedDomains = options.allowedDomains ?? ["shop.example.com"];
  else if (options.allowedDomains !== undefined) body.allowedDomains = options.allowedDomains;
  const res = await ctx.request("POST", "/api/v1/api-keys/", { token, body });
  expect(res.status).toBe(201);
  return { id: res.body.id, apiKey: res.body.api_key };
}
