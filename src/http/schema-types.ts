/**
 * Schema builders for hot routes. Elysia's `t.Integer` is a transform (it also accepts numeric strings), so a
 * response or body holding one is walked by TypeBox's transform encoder/decoder on every request; a plain
 * TypeBox integer is checked by the compiled validator alone. JSON bodies and responses carry real numbers,
 * so nothing is lost. Path and query parameters, which arrive as strings, keep `t.Integer` / `t.Numeric`.
 */
import { type IntegerOptions, Kind, type NumberOptions, Type, TypeRegistry } from "@sinclair/typebox";

export const JsonInteger = (options?: IntegerOptions) => Type.Integer(options);

/**
 * The largest price, interaction value or price range the service takes: far above any real order in any
 * currency, and small enough that sums of them and of their squares (mean ratings, revenue and its variance
 * in online metrics and experiment results) stay finite. Without it one interaction of 1e160, which a
 * publishable key may send, overflowed every mean rating of its account and broke its recommendations.
 */
export const MAX_AMOUNT = 1e12;

/** A positive amount of at most `MAX_AMOUNT`: a price, a rating, a purchase's revenue. */
export const Amount = (options: NumberOptions & { description: string }) =>
  Type.Number({ exclusiveMinimum: 0, maximum: MAX_AMOUNT, ...options });

export const MAX_ATTRIBUTE_KEYS = 100;
export const MAX_ATTRIBUTES_JSON_BYTES = 16 * 1024;

const BOUNDED_ATTRIBUTES = "BoundedAttributes";

/**
 * Free key/value attributes with the contract's bounds: at most 100 keys and 16 KB as JSON. JSON Schema can
 * count keys but not measure size, so the check is a TypeBox kind of its own; it runs wherever the schema is
 * compiled (the routes and each bulk-ingestion record). A megabyte-sized attribute was accepted before, and
 * every filter then lower-cased it again on every request.
 */
if (!TypeRegistry.Has(BOUNDED_ATTRIBUTES)) {
  TypeRegistry.Set(BOUNDED_ATTRIBUTES, (_schema, value) => {
    if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
    if (Object.keys(value).length > MAX_ATTRIBUTE_KEYS) return false;
    return Buffer.byteLength(JSON.stringify(value)) <= MAX_ATTRIBUTES_JSON_BYTES;
  });
}

export const Attributes = (description: string) =>
  Type.Unsafe<Record<string, unknown>>({
    [Kind]: BOUNDED_ATTRIBUTES,
    type: "object",
    maxProperties: MAX_ATTRIBUTE_KEYS,
    additionalProperties: true,
    description: `${description} At most ${MAX_ATTRIBUTE_KEYS} keys and 16 KB as JSON.`,
    "x-expected": `an object of at most ${MAX_ATTRIBUTE_KEYS} keys and 16 KB as JSON`,
  });

/**
 * Options of every query-string schema: parameters a route does not know (a cache buster, `utm_*`) are
 * ignored, as links and proxies add them; Elysia otherwise refuses them with a 422.
 */
export const UNKNOWN_QUERY_IGNORED = { additionalProperties: true } as const;

/**
 * A schema holding this key is shown in the OpenAPI document as the schema it names (openapi-document.ts).
 * For inputs checked record by record (bulk ingestion): the envelope accepts any object so that one bad
 * record becomes a record error, not a 422 for the whole batch, but clients should see the shape each record
 * must have.
 */
export const DOCUMENTED_AS = "x-documented-as";
