import type { Database } from "../../db/client";
import { apiKeys } from "../../db/schema";
import { API_SCOPES, type TenantContext } from "../../http/tenant";
import { AppError, validationError } from "../../shared/errors";
import { generateApiKey } from "./key-material";
import { publicSuffixWildcards } from "./origins";
import type { ApiKeyCreateInput } from "./schemas";

/** What this use case reads from the app. */
export interface Deps {
  readonly database: Database;
}

export async function createApiKey({
  ctx,
  deps,
  input,
}: {
  ctx: TenantContext;
  deps: Deps;
  input: ApiKeyCreateInput;
}) {
  if (ctx.actor.type !== "user")
    throw new AppError("INVALID_TOKEN", "Creating an API key needs a user access token");
  const kind = input.kind ?? "secret";
  let scopes: string[] = [];
  let allowedDomains: string[] = [];
  if (kind === "secret") {
    if (input.scopes !== undefined || input.allowedDomains !== undefined) {
      throw validationError([
        {
          loc: ["body", input.scopes !== undefined ? "scopes" : "allowedDomains"],
          msg: "Only publishable keys carry scopes and allowedDomains",
          type: "value_error.secret_key_restrictions",
        },
      ]);
    }
  } else {
    if (input.allowedDomains === undefined) {
      throw validationError([
        {
          loc: ["body", "allowedDomains"],
          msg: "Publishable keys need at least one allowed domain",
          type: "value_error.missing",
        },
      ]);
    }
    scopes = [...(input.scopes ?? API_SCOPES)];
    allowedDomains = [...new Set(input.allowedDomains.map((domain) => domain.toLowerCase()))];
    const tooWide = publicSuffixWildcards(allowedDomains);
    if (tooWide.length > 0) {
      throw validationError(
        tooWide.map((domain) => ({
          loc: ["body", "allowedDomains", String(allowedDomains.indexOf(domain))],
          msg: `${domain} would admit every site under a public suffix; name your own domain (e.g. *.shop.com)`,
          type: "value_error.public_suffix",
        })),
      );
    }
  }

  const key = generateApiKey(kind);
  const [row] = await deps.database.db
    .insert(apiKeys)
    .values({
      accountId: ctx.accountId,
      name: input.name.trim(),
      kind,
      keyHash: key.hash,
      prefix: key.prefix,
      lastChars: key.lastChars,
      scopes,
      allowedDomains,
      createdByUserId: ctx.actor.userId,
    })
    .returning();
  if (row === undefined) throw new Error("api key insert returned no row");
  return {
    id: row.id,
    api_key: key.value,
    name: row.name,
    kind,
    prefix: row.prefix,
    lastChars: row.lastChars,
    scopes: row.scopes,
    allowedDomains: row.allowedDomains,
    created_at: row.createdAt.toISOString(),
    message: "Store this key now: it is shown only once and cannot be recovered.",
  };
}
