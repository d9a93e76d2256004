import { and, eq, gt, isNull, sql } from "drizzle-orm";
import type { Database } from "../../db/client";
import { emailVerificationTokens, systemUsers } from "../../db/schema";
import { AppError } from "../../shared/errors";
import type { Identity } from "./identity";
import { hashVerificationToken, tokenUserId } from "./verification-mail";

/**
 * Consumes a verification token (single use: the update that marks it used is the check). The token is
 * hashed with the user's current address, so one mailed to an earlier address matches nothing.
 */
export async function verifyEmail({
  deps,
  input,
}: {
  deps: { readonly database: Database; readonly identity: Identity };
  input: { token: string };
}) {
  const userId = tokenUserId(input.token);
  const accountId =
    userId === undefined
      ? undefined
      : await deps.database.db.transaction(async (tx) => {
          const [user] = await tx
            .select({ email: systemUsers.email, accountId: systemUsers.accountId })
            .from(systemUsers)
            .where(eq(systemUsers.id, userId))
            .for("update");
          if (user === undefined) return undefined;
          const [used] = await tx
            .update(emailVerificationTokens)
            .set({ usedAt: sql`now()` })
            .where(
              and(
                eq(emailVerificationTokens.userId, userId),
                eq(emailVerificationTokens.tokenHash, hashVerificationToken(input.token, user.email)),
                isNull(emailVerificationTokens.usedAt),
                gt(emailVerificationTokens.expiresAt, sql`now()`),
              ),
            )
            .returning({ id: emailVerificationTokens.id });
          if (used === undefined) return undefined;
          await tx
            .update(systemUsers)
            .set({
              emailVerifiedAt: sql`coalesce(${systemUsers.emailVerifiedAt}, now())`,
              updatedAt: sql`now()`,
            })
            .where(eq(systemUsers.id, userId));
          return user.accountId;
        });
  if (accountId === undefined) {
    throw new AppError("NOT_FOUND", "Verification token not found, expired or already used");
  }
  await deps.identity.accounts.changed(accountId);
  return { message: "E-mail address verified", emailVerified: true as const };
}
