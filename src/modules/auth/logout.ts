import type { Database } from "../../db/client";
import { revokedTokens } from "../../db/schema";
import type { TenantContext } from "../../http/tenant";
import { AppError } from "../../shared/errors";

/** What this use case reads from the app. */
export interface Deps {
  readonly database: Database;
}

/** Revokes the presented JWT; its jti is kept until the token would have expired anyway. */
export async function logoutUser({ ctx, deps }: { ctx: TenantContext; deps: Deps }) {
  if (ctx.actor.type !== "user")
    throw new AppError("INVALID_TOKEN", "Logout needs the bearer token to revoke");
  await deps.database.db
    .insert(revokedTokens)
    .values({ jti: ctx.actor.jti, userId: ctx.actor.userId, expiresAt: ctx.actor.expiresAt })
    .onConflictDoNothing();
  return { message: "Logged out: this access token is revoked" };
}
