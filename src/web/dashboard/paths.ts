/**
 * Addresses inside the dashboard: the record id a detail page is about, and the page to come back to after
 * logging in. Paths here are the app's own, below BASE, as the router's links and `navigate` take them.
 */
import { usePathname } from "wouter-preact/use-browser-location";

export const BASE = "/dashboard";

const decodeOnce = (raw: string): string => {
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
};

/**
 * The record id in the last segment of the address, decoded exactly once. Links put ids there with
 * `encodeURIComponent`. The router's own params are not usable: it applies `decodeURI`, which leaves "%2F",
 * "%3F" or "%23" encoded, and decoding its result again would also turn an id's literal "%41" into "A".
 */
export function useRecordId(): string {
  const path = usePathname();
  return decodeOnce(path.slice(path.lastIndexOf("/") + 1));
}

/** The page the browser is on, as an app path with its query (`/data/end-users/a%20b?x=1`). */
export function currentAppPath(): string {
  const { pathname, search } = window.location;
  const inApp = pathname === BASE || pathname.startsWith(`${BASE}/`) ? pathname.slice(BASE.length) : "/";
  return `${inApp === "" ? "/" : inApp}${search}`;
}

/** The log-in page, remembering `wanted` (an app path) to open once signed in. */
export function logInPath(wanted: string): string {
  return wanted === "/" || wanted.startsWith("/login") || wanted.startsWith("/signup")
    ? "/login"
    : `/login?next=${encodeURIComponent(wanted)}`;
}

/**
 * Where to go after logging in: the `next` the log-in address carries when it is a path of this app, else
 * Home. Anything that would leave the app (another origin, `//host`, `/../api`) is refused, so the log-in
 * page cannot be made to send a person elsewhere.
 */
export function returnPath(search: string = window.location.search): string {
  const next = new URLSearchParams(search).get("next");
  if (next === null || !next.startsWith("/") || next.startsWith("//") || next.startsWith("/\\")) return "/";
  let target: URL;
  try {
    target = new URL(`${BASE}${next}`, window.location.origin);
  } catch {
    return "/";
  }
  if (target.origin !== window.location.origin || !target.pathname.startsWith(`${BASE}/`)) return "/";
  const path = target.pathname.slice(BASE.length);
  if (path.startsWith("/login") || path.startsWith("/signup")) return "/";
  return `${path}${target.search}`;
}
