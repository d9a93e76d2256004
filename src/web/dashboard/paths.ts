/** Addresses inside the dashboard: the record id a detail page is about. */
import { usePathname } from "wouter-preact/use-browser-location";

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
