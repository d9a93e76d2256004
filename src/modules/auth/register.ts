import { eq } from "drizzle-orm";
import type { Config } from "../../config";
import type { Database } from "../../db/client";
import { accounts, apiKeys, systemUsers } from "../../db/schema";
import { AppError } from "../../shared/errors";
import type { Logger } from "../../shared/logger";
import type { RateLimiter } from "../../shared/rate-limit";
import { retryAfterSeconds } from "../../shared/rate-limit";
import { generateApiKey } from "../api-keys/key-material";
import type { Identity } from "./identity";
import { hashPassword, isUniqueViolation, normalizeEmail } from "./passwords";
import type { RegisterInput } from "./schemas";
import { issueAccessToken } from "./tokens";
import { sendVerificationMail } from "./verification-mail";

type RegisterDeps = {
  readonly database: Database;
  readonly config: Config;
  readonly identity: Identity;
  readonly logger: Logger;
  readonly rateLimiter: RateLimiter;
};

/**
 * Sign-up: account, owner user, first secret key and access token are created together or not at all.
 * Each sign-up costs an argon2id hash (64 MiB) and an e-mail to any address, so they are limited per
 * client address (SIGNUP_LIMIT_PER_HOUR), counted before any of that work.
 */
export async function registerAccount({
  deps,
  input,
  client,
  limitHeaders,
}: {
  deps: RegisterDeps;
  input: RegisterInput;
  client: string;
  /** Told the sign-up limit's X-RateLimit-* headers for the answer (none when sign-ups are not limited). */
  limitHeaders?: (headers: Record<string, string>) => void;
}) {
  const headers = await throttleSignUp(deps, client);
  if (headers !== undefined) limitHeaders?.(headers);
  const email = normalizeEmail(input.email);
  const passwordHash = await hashPassword(input.password);
  const key = generateApiKey("secret");
  const createdAt = new Date();

  let created: { accountId: number; userId: number; accessToken: string };
  try {
    created = await deps.database.db.transaction(async (tx) => {
      const [existing] = await tx
        .select({ id: systemUsers.id })
        .from(systemUsers)
        .where(eq(systemUsers.email, email));
      if (existing !== undefined) throw conflict();
      const [account] = await tx
        .insert(accounts)
        .values({ name: input.accountName.trim() })
        .returning({ id: accounts.id });
      if (account === undefined) throw new Error("account insert returned no row");
      const [user] = await tx
        .insert(systemUsers)
        .values({
          accountId: account.id,
          email,
          passwordHash,
          isOwner: true,
          tokensValidAfter: createdAt,
          createdAt,
        })
        .returning({ id: systemUsers.id });
      if (user === undefined) throw new Error("user insert returned no row");
      await tx.insert(apiKeys).values({
        accountId: account.id,
        name: "Default secret key",
        kind: "secret",
        keyHash: key.hash,
        prefix: key.prefix,
        lastChars: key.lastChars,
        createdByUserId: user.id,
      });
      const token = await issueAccessToken(deps.config, { userId: user.id, accountId: account.id });
      return { accountId: account.id, userId: user.id, accessToken: token.token };
    });
  } catch (error) {
    if (isUniqueViolation(error)) throw conflict();
    throw error;
  }

  try {
    await sendVerificationMail(deps, { userId: created.userId, email });
  } catch (error) {
    // Sign-up stands; the user can ask for another message with send-verification-email.
    deps.logger.warn("verification mail not sent", { userId: created.userId, error });
  }

  return {
    accessToken: created.accessToken,
    tokenType: "bearer" as const,
    accountId: created.accountId,
    userId: created.userId,
    // The address is not verified yet: admin rights wait for verification (see admin.ts).
    isAdmin: false,
    apiKey: key.value,
    message: "Account created. Store the API key now: it is shown only once. A verification e-mail was sent.",
    emailVerificationRequired: true,
  };
}

/** Counts the sign-up against its client's hour; answers the X-RateLimit-* headers, or refuses with 429. */
async function throttleSignUp(
  deps: RegisterDeps,
  client: string,
): Promise<Record<string, string> | undefined> {
  const limit = deps.config.signupLimitPerHour;
  if (limit === 0) return undefined;
  const now = Date.now();
  const hour = Math.floor(now / HOUR_MS);
  const decision = await deps.rateLimiter.consume([
    { key: `signup:${client}:${hour}`, limit, resetAt: (hour + 1) * HOUR_MS },
  ]);
  const state = decision.rules[0]!;
  const reset = String(retryAfterSeconds(state, now));
  const headers = {
    "x-ratelimit-limit": String(limit),
    "x-ratelimit-remaining": String(decision.allowed ? state.remaining : 0),
    "x-ratelimit-reset": reset,
  };
  if (decision.allowed) return headers;
  throw new AppError("RATE_LIMITED", `At most ${limit} sign-ups per hour from one address; try again later`, {
    headers: { "retry-after": reset, ...headers },
  });
}

const HOUR_MS = 3_600_000;

const conflict = () => new AppError("CONFLICT", "An account with this e-mail address already exists");
