/**
 * The long-lived identity parts shared by the auth plugin and the identity modules, built once in createDeps.
 */
import type { RedisClient } from "bun";
import type { Config } from "../../config";
import type { Database } from "../../db/client";
import type { Logger } from "../../shared/logger";
import { createMailer, type Mailer } from "../../shared/mailer";
import { AccountCache } from "../accounts/account-cache";
import { ApiKeyCache } from "../api-keys/key-cache";
import { LastUsedBuffer } from "../api-keys/last-used-buffer";
import { type LoginThrottle, MemoryLoginThrottle } from "./login-throttle";
import { RedisLoginThrottle } from "./redis-login-throttle";
import { TokenPurge } from "./token-purge";

export interface Identity {
  /** API key hash → key record, with cross-process revocation. */
  readonly keys: ApiKeyCache;
  /** Account facts per request; call `accounts.changed(accountId)` after changing an account row. */
  readonly accounts: AccountCache;
  readonly lastUsed: LastUsedBuffer;
  readonly loginThrottle: LoginThrottle;
  readonly mailer: Mailer;
}

export function createIdentity(
  config: Config,
  logger: Logger,
  database: Database,
  redis: RedisClient | undefined,
): Identity & { start(): Promise<void>; stop(): Promise<void> } {
  const keys = new ApiKeyCache(database, logger);
  const accounts = new AccountCache(database, logger);
  const lastUsed = new LastUsedBuffer(database, logger);
  const purge = new TokenPurge(database, logger);
  return {
    keys,
    accounts,
    lastUsed,
    loginThrottle:
      redis === undefined
        ? new MemoryLoginThrottle()
        : new RedisLoginThrottle(redis, `${config.redisKeyPrefix}login:`, logger),
    mailer: createMailer(config, logger),
    async start() {
      await keys.start();
      await accounts.start();
      lastUsed.start();
      purge.start();
    },
    async stop() {
      purge.stop();
      await lastUsed.stop();
      await keys.stop();
      await accounts.stop();
    },
  };
}
