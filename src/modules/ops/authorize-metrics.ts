import { createHash, timingSafeEqual } from "node:crypto";
import { AppError } from "../../shared/errors";

export interface MetricsCaller {
  authorization: string | null;
  /** The peer address; null when the request did not come over a socket (in-process calls). */
  peerAddress: string | null;
  /** A proxy in front of the service marks forwarded requests; those are never treated as local. */
  forwarded: boolean;
}

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|::1|::ffff:127\.\d+\.\d+\.\d+)$/;

/**
 * With METRICS_TOKEN set, the scrape must send it as a bearer token. Without it, only clients on this
 * machine may scrape, and not through a proxy: a reverse proxy on the same host would otherwise make
 * every internet client look local.
 */
export function authorizeMetrics({
  token,
  caller,
}: {
  token: string | undefined;
  caller: MetricsCaller;
}): void {
  if (token !== undefined) {
    const match = /^Bearer\s+(.+)$/i.exec(caller.authorization ?? "");
    if (match === null || !sameSecret(match[1] as string, token)) {
      throw new AppError("INVALID_TOKEN", "GET /metrics needs Authorization: Bearer <METRICS_TOKEN>");
    }
    return;
  }
  const local = caller.peerAddress === null || LOOPBACK.test(caller.peerAddress);
  if (!local || caller.forwarded) {
    throw new AppError(
      "FORBIDDEN",
      "GET /metrics answers only local clients; set METRICS_TOKEN to scrape from elsewhere",
    );
  }
}

function sameSecret(given: string, expected: string): boolean {
  // Comparing digests keeps the comparison constant-time whatever the lengths.
  const a = createHash("sha256").update(given).digest();
  const b = createHash("sha256").update(expected).digest();
  return timingSafeEqual(a, b);
}
