/**
 * API key values: `sk_live_` / `pk_live_` followed by 40 random base62 characters (≈238 bits). Keys are
 * high-entropy, so a single SHA-256 is a sufficient and fast hash for lookup; only that hash, a display
 * prefix and the last characters are ever stored.
 */
import { randomBytes, timingSafeEqual } from "node:crypto";

export type ApiKeyKind = "secret" | "publishable";

const ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const RANDOM_LENGTH = 40;
const KEY_SHAPE = /^(sk|pk)_live_[0-9A-Za-z]{32,64}$/;
const PREFIX_BY_KIND: Record<ApiKeyKind, string> = { secret: "sk_live_", publishable: "pk_live_" };

export interface GeneratedKey {
  value: string;
  hash: string;
  prefix: string;
  lastChars: string;
}

function randomBase62(length: number): string {
  let out = "";
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      // 248 = 4 * 62: rejecting larger bytes keeps every character equally likely.
      if (byte < 248) out += ALPHABET[byte % 62];
      if (out.length === length) break;
    }
  }
  return out;
}

export function generateApiKey(kind: ApiKeyKind): GeneratedKey {
  const value = `${PREFIX_BY_KIND[kind]}${randomBase62(RANDOM_LENGTH)}`;
  return {
    value,
    hash: hashApiKey(value),
    prefix: value.slice(0, PREFIX_BY_KIND[kind].length + 4),
    lastChars: value.slice(-4),
  };
}

export function hashApiKey(value: string): string {
  // Runs on every authenticated request: Bun's one-shot SHA-256 is several times cheaper than node:crypto's.
  return Bun.SHA256.hash(value, "hex");
}

/** Cheap shape check so garbage never reaches the database. */
export function looksLikeApiKey(value: string): boolean {
  return KEY_SHAPE.test(value);
}

/** Constant-time comparison of two hex digests. */
export function sameHash(a: string, b: string): boolean {
  const left = Buffer.from(a, "hex");
  const right = Buffer.from(b, "hex");
  return left.length === right.length && timingSafeEqual(left, right);
}
