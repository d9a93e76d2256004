import { eq } from "drizzle-orm";
import { accounts, apiKeys, systemUsers } from "../../db/schema";
import type { AppDeps } from "../../deps";
import { AppError } from "../../shared/errors";
import { generateApiKey } from "../api-keys/key-material";
import { hashPassword, isUniqueViolation, normalizeEmail } from "./passwords";
import type { RegisterInput } from "./schemas";
import { issueAccessToken } from "./tokens";
import { sendVerificationMail } from "./verification-mail";

/** Sign-up: account, owner user, first secret key and access token are created together or not at all. */
export async function registerAccount({ deps, input }: { deps: AppDeps; input: RegisterInput }) {
  const email = normalizeEmail(input.email);
  const passwordHash = await hashPassword(input.password);
  const key = generateApiKey("secret");
  const createdAt = new Date();

  let created: { accountId: number; userId: number; accessToken: string };
  try {
    created = await deps.database.db.transaction(async (tx) => {
      const [existing] = await tx
        .select({ id: systemUsers.id })
        .from(systemUsers)
        .where(eq(systemUsers.email, email));
      if (existing !== undefined) throw conflict();
      const [account] = await tx
        .insert(accounts)
        .values({ name: input.accountName.trim() })
        .returning({ id: accounts.id });
      if (account === undefined) throw new Error("account insert returned no row");
      const [user] = await tx
        .insert(systemUsers)
        .values({
          accountId: account.id,
          email,
          passwordHash,
          isOwner: true,
          tokensValidAfter: createdAt,
          createdAt,
        })
        .returning({ id: systemUsers.id });
      if (user === undefined) throw new Error("user insert returned no row");
      await tx.insert(apiKeys).values({
        accountId: account.id,
        name: "Default secret key",
        kind: "secret",
        keyHash: key.hash,
        prefix: key.prefix,
        lastChars: key.lastChars,
        createdByUserId: user.id,
      });
      const token = await issueAccessToken(deps.config, { userId: user.id, accountId: account.id });
      return { accountId: account.id, userId: user.id, accessToken: token.token };
    });
  } catch (error) {
    if (isUniqueViolation(error)) throw conflict();
    throw error;
  }

  try {
    await sendVerificationMail(deps, { userId: created.userId, email });
  } catch (error) {
    // Sign-up stands; the user can ask for another message with send-verification-email.
    deps.logger.warn("verification mail not sent", { userId: created.userId, error });
  }

  return {
    accessToken: created.accessToken,
    tokenType: "bearer" as const,
    accountId: created.accountId,
    userId: created.userId,
    isAdmin: deps.config.adminEmails.includes(email),
    apiKey: key.value,
    message: "Account created. Store the API key now: it is shown only once. A verification e-mail was sent.",
    emailVerificationRequired: true,
  };
}

const conflict = () => new AppError("CONFLICT", "An account with this e-mail address already exists");
