/**
 * E-mail verification tokens: 32 random bytes, stored only as a SHA-256 hash, single-use, valid 24 h.
 * The hash covers the address the message went to, so a token can only ever verify that address: after an
 * e-mail change, tokens mailed to the old address no longer match (and the change deletes them anyway).
 * The token carries the user id so the address to hash with can be looked up.
 */

import { createHash, randomBytes } from "node:crypto";
import type { Config } from "../../config";
import type { Database } from "../../db/client";
import { emailVerificationTokens } from "../../db/schema";
import type { Identity } from "./identity";

export const VERIFICATION_TTL_MS = 24 * 3_600_000;

export type MailDeps = { readonly database: Database; readonly config: Config; readonly identity: Identity };

export const hashVerificationToken = (token: string, email: string): string =>
  createHash("sha256").update(`${email}\n${token}`).digest("hex");

/** The user id a token names, or undefined when it is not a token of ours. */
export function tokenUserId(token: string): number | undefined {
  const match = /^(\d{1,10})\.[A-Za-z0-9_-]{20,}$/.exec(token);
  const userId = match === null ? Number.NaN : Number(match[1]);
  return Number.isSafeInteger(userId) && userId > 0 && userId < 2 ** 31 ? userId : undefined;
}

export async function sendVerificationMail(
  deps: MailDeps,
  user: { userId: number; email: string },
): Promise<void> {
  const token = `${user.userId}.${randomBytes(32).toString("base64url")}`;
  await deps.database.db.insert(emailVerificationTokens).values({
    userId: user.userId,
    tokenHash: hashVerificationToken(token, user.email),
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
