/**
 * Where a payer is sent back to after checkout or the portal. These URLs are echoed as a 303 target and as
 * links on the provider's pages, so only absolute https URLs pass (http only for the local machine): no
 * `javascript:`, no plain-http page an intermediary could rewrite.
 */
import { validationError } from "../../shared/errors";

const LOCAL_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]"]);

export function requireReturnUrl(field: string, value: string | undefined): void {
  if (value === undefined) return;
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    url = undefined;
  }
  const ok =
    url !== undefined &&
    (url.protocol === "https:" || (url.protocol === "http:" && LOCAL_HOSTS.has(url.hostname.toLowerCase())));
  if (!ok) {
    throw validationError([
      {
        loc: ["body", field],
        msg: "must be an absolute https:// URL (http:// only for localhost)",
        type: "value_error.url",
      },
    ]);
  }
}
