/**
 * FREE accounts whose users have not verified an e-mail address keep API access for a grace period
 * counted from the first user's creation; after it, API-key calls answer 403 EMAIL_NOT_VERIFIED.
 * Dashboard (JWT) calls stay open so the user can still verify.
 */
import type { TenantGuard } from "../../http/tenant";
import { AppError } from "../../shared/errors";

export const GRACE_PERIOD_DAYS = 7;
const DAY_MS = 86_400_000;

export interface GraceState {
  gracePeriodEndsAt: Date | null;
  gracePeriodDaysLeft: number | null;
}

/** Grace information for a user: null fields when no grace period applies (paid plan or verified). */
export function graceState(
  plan: string,
  emailVerified: boolean,
  userCreatedAt: Date,
  now = Date.now(),
): GraceState {
  if (plan !== "FREE" || emailVerified) return { gracePeriodEndsAt: null, gracePeriodDaysLeft: null };
  const endsAt = new Date(userCreatedAt.getTime() + GRACE_PERIOD_DAYS * DAY_MS);
  return {
    gracePeriodEndsAt: endsAt,
    gracePeriodDaysLeft: Math.max(0, Math.ceil((endsAt.getTime() - now) / DAY_MS)),
  };
}

export function emailGraceGuard(): TenantGuard {
  return (tenant) => {
    if (tenant.actor.type !== "apiKey") return;
    const { account } = tenant;
    if (account.firstUserCreatedAt === null) return;
    const { gracePeriodEndsAt } = graceState(account.plan, account.emailVerified, account.firstUserCreatedAt);
    if (gracePeriodEndsAt !== null && gracePeriodEndsAt.getTime() <= Date.now()) {
      throw new AppError(
        "EMAIL_NOT_VERIFIED",
        "The e-mail grace period has ended: verify the account's e-mail address to keep using API keys",
      );
    }
  };
}
