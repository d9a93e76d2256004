/**
 * The client address that sign-up and login are throttled by. X-Forwarded-For is anyone's to write, so it
 * is read only as far as TRUST_PROXY allows: with a hop count, the address that many hops in front of the
 * service; with a proxy address list, the nearest address that is not one of those proxies. Without
 * TRUST_PROXY the header is ignored and the client is the socket's peer, so rotating the header cannot buy
 * an attacker a fresh bucket.
 */
import type { TrustProxy } from "../../config";

type Server = { requestIP(request: Request): { address: string } | null } | null | undefined;

export function clientIp(request: Request, server: Server, trustProxy: TrustProxy | undefined): string {
  const peer = normalize(server?.requestIP(request)?.address ?? "unknown");
  if (trustProxy === undefined) return peer;
  const forwarded = (request.headers.get("x-forwarded-for") ?? "")
    .split(",")
    .map((hop) => normalize(hop.trim()))
    .filter((hop) => hop !== "");
  // Nearest last: each proxy appends the address it received the request from.
  const chain = [...forwarded, peer];
  if ("hops" in trustProxy) return chain[Math.max(0, chain.length - 1 - trustProxy.hops)] ?? peer;
  let index = chain.length - 1;
  while (index > 0 && trustProxy.addresses.includes(chain[index] ?? "")) index--;
  return chain[index] ?? peer;
}

/** `::ffff:10.0.0.1` (IPv4 on an IPv6 socket) and `10.0.0.1` are one client. */
function normalize(address: string): string {
  const lower = address.toLowerCase();
  return lower.startsWith("::ffff:") && lower.includes(".") ? lower.slice(7) : lower;
}
