import { eq } from "drizzle-orm";
import { accounts, systemUsers } from "../../db/schema";
import type { AppDeps } from "../../deps";
import { AppError } from "../../shared/errors";
import { normalizeEmail, verifyPassword } from "./passwords";
import type { LoginInput } from "./schemas";
import { issueAccessToken } from "./tokens";

/**
 * Login. Unknown e-mail and wrong password give the same answer after the same work (a decoy hash is
 * verified), and failures are throttled per e-mail and per client IP.
 */
export async function loginUser({ deps, input, ip }: { deps: AppDeps; input: LoginInput; ip: string }) {
  const email = normalizeEmail(input.email);
  const wait = await deps.identity.loginThrottle.retryAfter(email, ip);
  if (wait > 0) {
    throw new AppError("RATE_LIMITED", "Too many failed login attempts; try again later", {
      headers: { "retry-after": String(wait) },
    });
  }
  const [user] = await deps.database.db
    .select({
      id: systemUsers.id,
      accountId: systemUsers.accountId,
      passwordHash: systemUsers.passwordHash,
      accountActive: accounts.isActive,
    })
    .from(systemUsers)
    .innerJoin(accounts, eq(accounts.id, systemUsers.accountId))
    .where(eq(systemUsers.email, email));
  const ok = await verifyPassword(input.password, user?.passwordHash);
  if (user === undefined || !ok) {
    await deps.identity.loginThrottle.recordFailure(email, ip);
    throw new AppError("INVALID_CREDENTIALS", "Incorrect e-mail or password");
  }
  await deps.identity.loginThrottle.recordSuccess(email);
  if (!user.accountActive) throw new AppError("FORBIDDEN", "This account is deactivated");
  const token = await issueAccessToken(deps.config, { userId: user.id, accountId: user.accountId });
  return {
    accessToken: token.token,
    tokenType: "bearer" as const,
    expiresIn: token.expiresIn,
    userId: user.id,
    accountId: user.accountId,
    isAdmin: deps.config.adminEmails.includes(email),
  };
}
