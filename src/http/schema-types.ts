/**
 * Schema builders for hot routes. Elysia's `t.Integer` is a transform (it also accepts numeric strings), so a
 * response or body holding one is walked by TypeBox's transform encoder/decoder on every request; a plain
 * TypeBox integer is checked by the compiled validator alone. JSON bodies and responses carry real numbers,
 * so nothing is lost. Path and query parameters, which arrive as strings, keep `t.Integer` / `t.Numeric`.
 */
import { type IntegerOptions, Type } from "@sinclair/typebox";

export const JsonInteger = (options?: IntegerOptions) => Type.Integer(options);

/**
 * A schema holding this key is shown in the OpenAPI document as the schema it names (openapi-document.ts).
 * For inputs checked record by record (bulk ingestion): the envelope accepts any object so that one bad
 * record becomes a record error, not a 422 for the whole batch, but clients should see the shape each record
 * must have.
 */
export const DOCUMENTED_AS = "x-documented-as";
