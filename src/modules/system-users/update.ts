import { and, eq, isNull, ne } from "drizzle-orm";
import type { Database } from "../../db/client";
import { emailVerificationTokens, systemUsers } from "../../db/schema";
import type { TenantContext } from "../../http/tenant";
import { AppError, validationError } from "../../shared/errors";
import type { Logger } from "../../shared/logger";
import type { Identity } from "../auth/identity";
import { loginThrottled } from "../auth/login";
import { hashPassword, isUniqueViolation, normalizeEmail, verifyPassword } from "../auth/passwords";
import { type MailDeps, sendVerificationMail } from "../auth/verification-mail";
import type { Deps as UserOutputDeps } from "./get";
import { requireUser, toUserOutput } from "./get";
import type { UserUpdateInput } from "./schemas";

/** What this use case reads from the app. */
export interface Deps extends UserOutputDeps, MailDeps {
  readonly database: Database;
  readonly identity: Identity;
  readonly logger: Logger;
}

/**
 * Updates the current user. Changing the e-mail or password needs the current password; a new e-mail must
 * be verified again (a link is mailed to it), and a new password revokes every token issued before it (this
 * request's included).
 */
export async function updateCurrentUser({
  ctx,
  deps,
  input,
  client,
}: {
  ctx: TenantContext;
  deps: Deps;
  input: UserUpdateInput;
  /** The caller's address: guesses of the current password count in the login throttle's windows. */
  client: string;
}) {
  const { userId } = requireUser(ctx);
  const where = and(eq(systemUsers.id, userId), eq(systemUsers.accountId, ctx.accountId));
  const [user] = await deps.database.db.select().from(systemUsers).where(where);
  if (user === undefined) throw new AppError("TOKEN_REVOKED", "The access token has been revoked");

  const changes: Partial<typeof systemUsers.$inferInsert> = {};
  if (input.fullName !== undefined) changes.fullName = input.fullName === null ? null : input.fullName.trim();
  const email = input.email === undefined ? undefined : normalizeEmail(input.email);
  const emailChanges = email !== undefined && email !== user.email;
  if (emailChanges || input.password !== undefined) {
    if (input.currentPassword === undefined) {
      throw validationError([
        {
          loc: ["body", "currentPassword"],
          msg: "Required to change the e-mail or password",
          type: "value_error.missing",
        },
      ]);
    }
    // A stolen session must not become a way to guess the password (and take the account over) faster than
    // logging in would allow: each check is reserved against the login throttle first.
    const reservation = await deps.identity.loginThrottle.reserve(user.email, client);
    if (!reservation.allowed) throw loginThrottled(reservation);
    if (!(await verifyPassword(input.currentPassword, user.passwordHash))) {
      throw new AppError("INVALID_CREDENTIALS", "The current password is incorrect");
    }
    await deps.identity.loginThrottle.succeeded(user.email, client, reservation);
  }
  if (emailChanges) {
    const [taken] = await deps.database.db
      .select({ id: systemUsers.id })
      .from(systemUsers)
      .where(and(eq(systemUsers.email, email), ne(systemUsers.id, userId)));
    if (taken !== undefined) throw new AppError("CONFLICT", "This e-mail address is already in use");
    changes.email = email;
    changes.emailVerifiedAt = null;
  }
  if (input.password !== undefined) {
    changes.passwordHash = await hashPassword(input.password);
    changes.tokensValidAfter = new Date();
  }
  if (Object.keys(changes).length === 0) return toUserOutput(deps, ctx.account.plan, user);

  let updated: typeof systemUsers.$inferSelect | undefined;
  try {
    [updated] = await deps.database.db.transaction(async (tx) => {
      // Links mailed to the old address must not verify the new one (their hashes would not match it
      // either; deleting them also lets the new address get its message at once).
      if (emailChanges) {
        await tx
          .delete(emailVerificationTokens)
          .where(and(eq(emailVerificationTokens.userId, userId), isNull(emailVerificationTokens.usedAt)));
      }
      return tx
        .update(systemUsers)
        .set({ ...changes, updatedAt: new Date() })
        .where(where)
        .returning();
    });
  } catch (error) {
    if (isUniqueViolation(error)) throw new AppError("CONFLICT", "This e-mail address is already in use");
    throw error;
  }
  if (updated === undefined) throw new AppError("TOKEN_REVOKED", "The access token has been revoked");
  if (emailChanges) {
    await deps.identity.accounts.changed(ctx.accountId);
    try {
      await sendVerificationMail(deps, { userId, email: updated.email });
    } catch (error) {
      // The change stands; the user can ask for another message with send-verification-email.
      deps.logger.warn("verification mail not sent", { userId, error });
    }
  }
  return toUserOutput(deps, ctx.account.plan, updated);
}
