import { and, eq, gt, sql } from "drizzle-orm";
import { emailVerificationTokens, systemUsers } from "../../db/schema";
import type { AppDeps } from "../../deps";
import type { TenantContext } from "../../http/auth";
import { AppError } from "../../shared/errors";
import { sendVerificationMail } from "./verification-mail";

const RESEND_INTERVAL_MS = 60_000;

export async function sendVerificationEmail({ ctx, deps }: { ctx: TenantContext; deps: AppDeps }) {
  if (ctx.actor.type !== "user") throw new AppError("INVALID_TOKEN", "A user access token is required");
  const userId = ctx.actor.userId;
  const [user] = await deps.database.db
    .select({ email: systemUsers.email, verifiedAt: systemUsers.emailVerifiedAt })
    .from(systemUsers)
    .where(and(eq(systemUsers.id, userId), eq(systemUsers.accountId, ctx.accountId)));
  if (user === undefined) throw new AppError("TOKEN_REVOKED", "The access token has been revoked");
  if (user.verifiedAt !== null) throw new AppError("CONFLICT", "This e-mail address is already verified");

  // Keeps the endpoint from being used to flood a mailbox.
  const [recent] = await deps.database.db
    .select({ createdAt: emailVerificationTokens.createdAt })
    .from(emailVerificationTokens)
    .where(
      and(
        eq(emailVerificationTokens.userId, userId),
        gt(emailVerificationTokens.createdAt, sql`now() - interval '60 seconds'`),
      ),
    )
    .limit(1);
  if (recent !== undefined) {
    const wait = Math.max(
      1,
      Math.ceil((recent.createdAt.getTime() + RESEND_INTERVAL_MS - Date.now()) / 1000),
    );
    throw new AppError("RATE_LIMITED", "A verification e-mail was sent less than a minute ago", {
      headers: { "retry-after": String(Math.min(wait, 60)) },
    });
  }
  await sendVerificationMail(deps, { userId, email: user.email });
  return { message: `Verification e-mail sent to ${user.email}` };
}
