/**
 * Where a publishable key may be used from. A wildcard on a public suffix (`*.com`, `*.co.uk`,
 * `*.github.io`) would admit any site anyone can register, so it is refused when the key is created; the
 * suffix list is the Public Suffix List (private domains included) bundled with tldts. A caller's origin
 * counts only over https (http only for the local machine), so `javascript://a.shop.com` or a plain-http
 * page an intermediary could rewrite does not pass.
 */
import { getPublicSuffix } from "tldts";

/** The wildcard entries of a key's domain list that cover a whole public suffix. */
export function publicSuffixWildcards(domains: readonly string[]): string[] {
  return domains.filter((domain) => {
    if (!domain.startsWith("*.")) return false;
    const base = domain.slice(2);
    return getPublicSuffix(base, { allowPrivateDomains: true }) === base;
  });
}

const LOCAL_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]"]);

/** The host of the request's Origin (or Referer) when it is a secure web origin, else undefined. */
export function callerHost(request: Request): string | undefined {
  return secureHost(request.headers.get("origin") ?? request.headers.get("referer"));
}

/** The host of an origin or URL that is a secure web origin (as `callerHost` admits), else undefined. */
export function secureHost(source: string | null): string | undefined {
  if (source === null || source === "null") return undefined;
  let url: URL;
  try {
    url = new URL(source);
  } catch {
    return undefined;
  }
  const host = url.hostname.toLowerCase();
  if (url.protocol === "https:" || (url.protocol === "http:" && LOCAL_HOSTS.has(host))) return host;
  return undefined;
}

/** `shop.com` matches exactly; `*.shop.com` matches any sub-domain of shop.com (not shop.com itself). */
export function hostAllowed(host: string, allowedDomains: readonly string[]): boolean {
  return allowedDomains.some((domain) =>
    domain.startsWith("*.") ? host.endsWith(domain.slice(1)) : host === domain,
  );
}
