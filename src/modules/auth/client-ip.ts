/**
 * The client address used for login throttling: the first X-Forwarded-For hop when a proxy set one,
 * otherwise the socket's address. A forged header can only move an attacker into another per-IP bucket;
 * the per-e-mail limit still holds.
 */
export function clientIp(
  request: Request,
  server: { requestIP(request: Request): { address: string } | null } | null | undefined,
): string {
  const forwarded = request.headers.get("x-forwarded-for")?.split(",")[0]?.trim();
  if (forwarded) return forwarded;
  return server?.requestIP(request)?.address ?? "unknown";
}
