import { and, eq } from "drizzle-orm";
import type { Config } from "../../config";
import type { Database } from "../../db/client";
import { systemUsers } from "../../db/schema";
import type { TenantContext } from "../../http/tenant";
import { AppError } from "../../shared/errors";
import { isPlatformAdmin } from "../auth/admin";
import { graceState } from "../auth/email-grace-guard";
import type { UserOutput } from "./schemas";

/** What this use case reads from the app. */
export interface Deps {
  readonly config: Config;
  readonly database: Database;
}

export function requireUser(ctx: TenantContext): { userId: number } {
  if (ctx.actor.type !== "user") throw new AppError("INVALID_TOKEN", "A user access token is required");
  return { userId: ctx.actor.userId };
}

export async function getCurrentUser({ ctx, deps }: { ctx: TenantContext; deps: Deps }): Promise<UserOutput> {
  const { userId } = requireUser(ctx);
  const [user] = await deps.database.db
    .select()
    .from(systemUsers)
    .where(and(eq(systemUsers.id, userId), eq(systemUsers.accountId, ctx.accountId)));
  if (user === undefined) throw new AppError("TOKEN_REVOKED", "The access token has been revoked");
  return toUserOutput(deps, ctx.account.plan, user);
}

export function toUserOutput(deps: Deps, plan: string, user: typeof systemUsers.$inferSelect): UserOutput {
  const grace = graceState(plan, user.emailVerifiedAt !== null, user.createdAt);
  return {
    userId: user.id,
    accountId: user.accountId,
    email: user.email,
    fullName: user.fullName,
    isOwner: user.isOwner,
    isAdmin: isPlatformAdmin(deps.config, user.email, user.emailVerifiedAt !== null),
    plan,
    emailVerified: user.emailVerifiedAt !== null,
    gracePeriodEndsAt: grace.gracePeriodEndsAt?.toISOString() ?? null,
    gracePeriodDaysLeft: grace.gracePeriodDaysLeft,
    createdAt: user.createdAt.toISOString(),
    updatedAt: user.updatedAt.toISOString(),
  };
}
