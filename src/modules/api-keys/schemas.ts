import { t } from "elysia";

const Scope = t.Union([t.Literal("recommendations:read"), t.Literal("interactions:write")]);
const Domain = t.String({
  maxLength: 253,
  pattern:
    "^(\\*\\.)?[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$",
  "x-expected": "a host name such as shop.com, or *.shop.com for its sub-domains, without scheme or port",
  description:
    "A host name (`shop.com`, exact match) or a wildcard (`*.shop.com`, any sub-domain); no scheme or port",
});

export const ApiKeyCreate = t.Object(
  {
    name: t.String({ minLength: 1, maxLength: 100, description: "Descriptive name" }),
    kind: t.Optional(
      t.Union([t.Literal("secret"), t.Literal("publishable")], {
        default: "secret",
        description:
          "secret (sk_live_…, server-side, every K/J route) or publishable (pk_live_…, browser use)",
      }),
    ),
    scopes: t.Optional(
      t.Array(Scope, {
        minItems: 1,
        uniqueItems: true,
        description: "Publishable keys only; default both scopes",
      }),
    ),
    allowedDomains: t.Optional(
      t.Array(Domain, {
        minItems: 1,
        maxItems: 50,
        description: "Publishable keys only, required: the Origin/Referer hosts the key may be used from",
      }),
    ),
  },
  { additionalProperties: false },
);

const metadataFields = {
  id: t.Integer(),
  name: t.String(),
  kind: t.Union([t.Literal("secret"), t.Literal("publishable")]),
  prefix: t.String({ description: "First characters of the key, for recognising it" }),
  lastChars: t.String({ description: "Last 4 characters of the key" }),
  scopes: t.Array(t.String()),
  allowedDomains: t.Array(t.String()),
  created_at: t.String({ format: "date-time" }),
};

export const ApiKeyCreated = t.Object({
  ...metadataFields,
  api_key: t.String({ description: "The complete key. Returned only in this response; store it now." }),
  message: t.String(),
});

export const ApiKeyMetadata = t.Object({
  ...metadataFields,
  last_used_at: t.Union([t.String({ format: "date-time" }), t.Null()], {
    description: "Last use, accurate to about 30 seconds",
  }),
});

export const ApiKeyList = t.Array(ApiKeyMetadata);

export const ApiKeyUpdate = t.Object(
  { name: t.String({ minLength: 1, maxLength: 100 }) },
  { additionalProperties: false },
);

export const ApiKeyIdParams = t.Object({
  api_key_id: t.Numeric({ minimum: 1, maximum: 2147483647, multipleOf: 1 }),
});

export type ApiKeyCreateInput = typeof ApiKeyCreate.static;
export type ApiKeyMetadataOutput = typeof ApiKeyMetadata.static;
