/**
 * Dashboard access tokens: HS256 JWTs carrying the user, the account and a `jti` that logout revokes.
 * `iam` (issued-at in milliseconds) lets `users.tokens_valid_after` cut off every older token exactly,
 * even one issued in the same second as a password change.
 */
import { errors as joseErrors, jwtVerify, SignJWT } from "jose";
import type { Config } from "../../config";
import { AppError } from "../../shared/errors";

export interface AccessToken {
  token: string;
  jti: string;
  expiresAt: Date;
  expiresIn: number;
}

export interface AccessClaims {
  userId: number;
  accountId: number;
  jti: string;
  issuedAtMs: number;
  expiresAt: Date;
}

const ISSUER = "recommendation-service";

export async function issueAccessToken(
  config: Config,
  subject: { userId: number; accountId: number },
  now = Date.now(),
): Promise<AccessToken> {
  const jti = crypto.randomUUID();
  const exp = Math.floor(now / 1000) + config.jwtTtlSeconds;
  const token = await new SignJWT({ acc: subject.accountId, iam: now })
    .setProtectedHeader({ alg: "HS256", typ: "JWT" })
    .setSubject(String(subject.userId))
    .setIssuer(ISSUER)
    .setJti(jti)
    .setIssuedAt(Math.floor(now / 1000))
    .setExpirationTime(exp)
    .sign(config.jwtSecret);
  return { token, jti, expiresAt: new Date(exp * 1000), expiresIn: config.jwtTtlSeconds };
}

/** Checks signature, algorithm and expiry; revocation is checked by the caller against the database. */
export async function verifyAccessToken(config: Config, token: string): Promise<AccessClaims> {
  try {
    const { payload } = await jwtVerify(token, config.jwtSecret, { algorithms: ["HS256"], issuer: ISSUER });
    const userId = Number(payload.sub);
    const accountId = Number(payload.acc);
    const issuedAtMs = Number(payload.iam);
    if (
      !Number.isSafeInteger(userId) ||
      !Number.isSafeInteger(accountId) ||
      !Number.isFinite(issuedAtMs) ||
      typeof payload.jti !== "string" ||
      typeof payload.exp !== "number"
    ) {
      throw new AppError("INVALID_TOKEN", "Invalid access token");
    }
    return { userId, accountId, jti: payload.jti, issuedAtMs, expiresAt: new Date(payload.exp * 1000) };
  } catch (error) {
    if (error instanceof AppError) throw error;
    if (error instanceof joseErrors.JWTExpired)
      throw new AppError("INVALID_TOKEN", "The access token has expired");
    throw new AppError("INVALID_TOKEN", "Invalid access token");
  }
}
