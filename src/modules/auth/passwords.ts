/** Password hashing: argon2id through Bun.password (salted, memory-hard). */
export const hashPassword = (password: string): Promise<string> => Bun.password.hash(password, "argon2id");

// Verified against when the e-mail is unknown, so a miss costs the same time as a wrong password.
const decoyHash = hashPassword(crypto.randomUUID());

export async function verifyPassword(password: string, hash: string | undefined): Promise<boolean> {
  const ok = await Bun.password.verify(password, hash ?? (await decoyHash));
  return ok && hash !== undefined;
}

export const normalizeEmail = (email: string): string => email.trim().toLowerCase();

/** True for a Postgres unique-constraint violation, whichever driver (and wrapper) raised it. */
export function isUniqueViolation(error: unknown): boolean {
  for (let e: unknown = error; e !== undefined && e !== null; e = (e as { cause?: unknown }).cause) {
    if ((e as { code?: unknown }).code === "23505") return true;
  }
  return false;
}
