import { and, eq, gt, sql } from "drizzle-orm";
import { emailVerificationTokens, systemUsers } from "../../db/schema";
import type { TenantContext } from "../../http/tenant";
import { AppError } from "../../shared/errors";
import { type MailDeps, sendVerificationMail } from "./verification-mail";

/**
 * Always answers (202): a "resend" click within a minute of the last message sends nothing new, which keeps
 * the endpoint from flooding a mailbox without making the click an error.
 */
export async function sendVerificationEmail({ ctx, deps }: { ctx: TenantContext; deps: MailDeps }) {
  if (ctx.actor.type !== "user") throw new AppError("INVALID_TOKEN", "A user access token is required");
  const userId = ctx.actor.userId;
  const [user] = await deps.database.db
    .select({ email: systemUsers.email, verifiedAt: systemUsers.emailVerifiedAt })
    .from(systemUsers)
    .where(and(eq(systemUsers.id, userId), eq(systemUsers.accountId, ctx.accountId)));
  if (user === undefined) throw new AppError("TOKEN_REVOKED", "The access token has been revoked");
  if (user.verifiedAt !== null) return { message: "This e-mail address is already verified" };

  const [recent] = await deps.database.db
    .select({ id: emailVerificationTokens.id })
    .from(emailVerificationTokens)
    .where(
      and(
        eq(emailVerificationTokens.userId, userId),
        gt(emailVerificationTokens.createdAt, sql`now() - interval '60 seconds'`),
      ),
    )
    .limit(1);
  if (recent !== undefined) {
    return {
      message: `A verification e-mail was sent to ${user.email} less than a minute ago; check the inbox (and spam)`,
    };
  }
  await sendVerificationMail(deps, { userId, email: user.email });
  return { message: `Verification e-mail sent to ${user.email}` };
}
