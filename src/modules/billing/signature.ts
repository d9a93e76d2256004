/**
 * Webhook signatures: `X-Signature: ts=<unix seconds>,v1=<hex HMAC-SHA256>` over `id:{data.id};ts:{ts};`
 * with PAYMENT_WEBHOOK_SECRET. Signatures older (or further ahead) than five minutes are replays.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import { AppError } from "../../shared/errors";

export const REPLAY_WINDOW_SECONDS = 300;

export function signatureFor(secret: string, dataId: string, ts: number): string {
  return createHmac("sha256", secret).update(`id:${dataId};ts:${ts};`).digest("hex");
}

export function signatureHeader(secret: string, dataId: string, ts = Math.floor(Date.now() / 1000)): string {
  return `ts=${ts},v1=${signatureFor(secret, dataId, ts)}`;
}

/** Throws 401 INVALID_SIGNATURE unless the header signs this data id within the replay window. */
export function verifySignature(
  secret: string,
  header: string | null,
  dataId: string,
  now = Date.now(),
): void {
  const parts = new Map<string, string>();
  for (const piece of (header ?? "").split(",")) {
    const [key, ...rest] = piece.trim().split("=");
    if (key !== undefined && rest.length > 0) parts.set(key.trim(), rest.join("=").trim());
  }
  const tsText = parts.get("ts");
  const given = parts.get("v1");
  if (
    tsText === undefined ||
    given === undefined ||
    !/^\d+$/.test(tsText) ||
    !/^[0-9a-f]{64}$/i.test(given)
  ) {
    throw new AppError("INVALID_SIGNATURE", "Missing or malformed X-Signature header");
  }
  const ts = Number(tsText);
  // Accept milliseconds as well as seconds: providers differ.
  const tsMs = ts > 1e12 ? ts : ts * 1000;
  if (Math.abs(now - tsMs) > REPLAY_WINDOW_SECONDS * 1000) {
    throw new AppError("INVALID_SIGNATURE", "The webhook signature has expired (older than 5 minutes)");
  }
  const expected = Buffer.from(signatureFor(secret, dataId, ts), "hex");
  const actual = Buffer.from(given, "hex");
  if (expected.length !== actual.length || !timingSafeEqual(expected, actual)) {
    throw new AppError("INVALID_SIGNATURE", "The webhook signature does not match");
  }
}
