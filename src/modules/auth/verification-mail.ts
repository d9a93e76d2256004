/**
 * E-mail verification tokens: 32 random bytes, stored only as a SHA-256 hash, single-use, valid 24 h.
 */
import { createHash, randomBytes } from "node:crypto";
import { emailVerificationTokens } from "../../db/schema";
import type { AppDeps } from "../../deps";

export const VERIFICATION_TTL_MS = 24 * 3_600_000;

export const hashVerificationToken = (token: string): string =>
  createHash("sha256").update(token).digest("hex");

export async function sendVerificationMail(
  deps: AppDeps,
  user: { userId: number; email: string },
): Promise<void> {
  const token = randomBytes(32).toString("base64url");
  await deps.database.db.insert(emailVerificationTokens).values({
    userId: user.userId,
    tokenHash: hashVerificationToken(token),
    expiresAt: new Date(Date.now() + VERIFICATION_TTL_MS),
  });
  const link = `${deps.config.publicBaseUrl}/api/v1/auth/verify-email?token=${token}`;
  await deps.identity.mailer.send({
    to: user.email,
    subject: "Verify your e-mail address",
    text:
      "Welcome to the Recommendation Service.\n\n" +
      `Open this link within 24 hours to verify your e-mail address:\n\n${link}\n\n` +
      "If you did not sign up, ignore this message.",
    actionLink: link,
  });
}
