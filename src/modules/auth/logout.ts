import { revokedTokens } from "../../db/schema";
import type { AppDeps } from "../../deps";
import type { TenantContext } from "../../http/auth";
import { AppError } from "../../shared/errors";

/** Revokes the presented JWT; its jti is kept until the token would have expired anyway. */
export async function logoutUser({ ctx, deps }: { ctx: TenantContext; deps: AppDeps }) {
  if (ctx.actor.type !== "user")
    throw new AppError("INVALID_TOKEN", "Logout needs the bearer token to revoke");
  await deps.database.db
    .insert(revokedTokens)
    .values({ jti: ctx.actor.jti, userId: ctx.actor.userId, expiresAt: ctx.actor.expiresAt })
    .onConflictDoNothing();
  return { message: "Logged out: this access token is revoked" };
}
