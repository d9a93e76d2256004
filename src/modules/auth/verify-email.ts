import { and, eq, gt, isNull, sql } from "drizzle-orm";
import { emailVerificationTokens, systemUsers } from "../../db/schema";
import type { AppDeps } from "../../deps";
import { AppError } from "../../shared/errors";
import { hashVerificationToken } from "./verification-mail";

/** Consumes a verification token (single use: the update that marks it used is the check). */
export async function verifyEmail({ deps, input }: { deps: AppDeps; input: { token: string } }) {
  const accountId = await deps.database.db.transaction(async (tx) => {
    const [used] = await tx
      .update(emailVerificationTokens)
      .set({ usedAt: sql`now()` })
      .where(
        and(
          eq(emailVerificationTokens.tokenHash, hashVerificationToken(input.token)),
          isNull(emailVerificationTokens.usedAt),
          gt(emailVerificationTokens.expiresAt, sql`now()`),
        ),
      )
      .returning({ userId: emailVerificationTokens.userId });
    if (used === undefined) return undefined;
    const [user] = await tx
      .update(systemUsers)
      .set({ emailVerifiedAt: sql`coalesce(${systemUsers.emailVerifiedAt}, now())`, updatedAt: sql`now()` })
      .where(eq(systemUsers.id, used.userId))
      .returning({ accountId: systemUsers.accountId });
    return user?.accountId;
  });
  if (accountId === undefined) {
    throw new AppError("NOT_FOUND", "Verification token not found, expired or already used");
  }
  await deps.identity.accounts.changed(accountId);
  return { message: "E-mail address verified", emailVerified: true as const };
}
