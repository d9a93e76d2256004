import { eq } from "drizzle-orm";
import type { Config } from "../../config";
import type { Database } from "../../db/client";
import { accounts, systemUsers } from "../../db/schema";
import { AppError } from "../../shared/errors";
import { isPlatformAdmin } from "./admin";
import type { Identity } from "./identity";
import type { LoginReservation } from "./login-throttle";
import { normalizeEmail, verifyPassword } from "./passwords";
import type { LoginInput } from "./schemas";
import { issueAccessToken } from "./tokens";

/**
 * Login. Unknown e-mail and wrong password give the same answer after the same work (a decoy hash is
 * verified). Each attempt is reserved against the throttle before the password is checked (see
 * login-throttle.ts), and a successful one is taken back.
 */
export async function loginUser({
  deps,
  input,
  client,
}: {
  deps: { readonly database: Database; readonly config: Config; readonly identity: Identity };
  input: LoginInput;
  client: string;
}) {
  const email = normalizeEmail(input.email);
  const reservation = await deps.identity.loginThrottle.reserve(email, client);
  if (!reservation.allowed) throw loginThrottled(reservation);
  const [user] = await deps.database.db
    .select({
      id: systemUsers.id,
      accountId: systemUsers.accountId,
      passwordHash: systemUsers.passwordHash,
      emailVerifiedAt: systemUsers.emailVerifiedAt,
      accountActive: accounts.isActive,
    })
    .from(systemUsers)
    .innerJoin(accounts, eq(accounts.id, systemUsers.accountId))
    .where(eq(systemUsers.email, email));
  const ok = await verifyPassword(input.password, user?.passwordHash);
  if (user === undefined || !ok) throw new AppError("INVALID_CREDENTIALS", "Incorrect e-mail or password");
  await deps.identity.loginThrottle.succeeded(email, client, reservation);
  if (!user.accountActive) throw new AppError("FORBIDDEN", "This account is deactivated");
  const token = await issueAccessToken(deps.config, { userId: user.id, accountId: user.accountId });
  return {
    accessToken: token.token,
    tokenType: "bearer" as const,
    expiresIn: token.expiresIn,
    userId: user.id,
    accountId: user.accountId,
    isAdmin: isPlatformAdmin(deps.config, email, user.emailVerifiedAt !== null),
  };
}

/** 429 for a password check the login throttle refused, with the refusing window's headers. */
export function loginThrottled(reservation: LoginReservation & { allowed: false }): AppError {
  return new AppError("RATE_LIMITED", "Too many failed password attempts; try again later", {
    headers: {
      "retry-after": String(reservation.retryAfter),
      "x-ratelimit-limit": String(reservation.limit),
      "x-ratelimit-remaining": "0",
      "x-ratelimit-reset": String(reservation.retryAfter),
    },
  });
}
