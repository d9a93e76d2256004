/**
 * Webhook signatures: `X-Signature: ts=<unix seconds>,v1=<hex HMAC-SHA256>` with PAYMENT_WEBHOOK_SECRET
 * over a manifest. Ours (the local provider) signs `id:{data.id};ts:{ts};`; MercadoPago signs
 * `id:{data.id};request-id:{x-request-id};ts:{ts};`, leaving out a part whose value the notification does
 * not carry. Signatures older (or further ahead) than five minutes are replays.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import { AppError } from "../../shared/errors";

export const REPLAY_WINDOW_SECONDS = 300;

/** What a signature covers: the notified object's id and, for MercadoPago, the X-Request-Id header. */
export interface SignedParts {
  readonly dataId: string;
  /** Undefined: not part of this provider's manifest. Null: part of it, but absent from the request. */
  readonly requestId?: string | null;
}

export function manifest(parts: SignedParts, ts: number): string {
  const requestId = parts.requestId ? `request-id:${parts.requestId};` : "";
  return `id:${parts.dataId};${requestId}ts:${ts};`;
}

export function signatureFor(secret: string, dataId: string, ts: number, requestId?: string | null): string {
  return createHmac("sha256", secret).update(manifest({ dataId, requestId }, ts)).digest("hex");
}

export function signatureHeader(
  secret: string,
  dataId: string,
  ts = Math.floor(Date.now() / 1000),
  requestId?: string | null,
): string {
  return `ts=${ts},v1=${signatureFor(secret, dataId, ts, requestId)}`;
}

/** Throws 401 INVALID_SIGNATURE unless the header signs these parts within the replay window. */
export function verifySignature(
  secret: string,
  header: string | null,
  parts: SignedParts | string,
  now = Date.now(),
): void {
  const signed = typeof parts === "string" ? { dataId: parts } : parts;
  const fields = new Map<string, string>();
  for (const piece of (header ?? "").split(",")) {
    const [key, ...rest] = piece.trim().split("=");
    if (key !== undefined && rest.length > 0) fields.set(key.trim(), rest.join("=").trim());
  }
  const tsText = fields.get("ts");
  const given = fields.get("v1");
  if (
    tsText === undefined ||
    given === undefined ||
    !/^\d{1,16}$/.test(tsText) ||
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
  const expected = Buffer.from(signatureFor(secret, signed.dataId, ts, signed.requestId), "hex");
  const actual = Buffer.from(given, "hex");
  if (expected.length !== actual.length || !timingSafeEqual(expected, actual)) {
    throw new AppError("INVALID_SIGNATURE", "The webhook signature does not match");
  }
}
