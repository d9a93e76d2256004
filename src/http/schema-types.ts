/**
 * Schema builders for hot routes. Elysia's `t.Integer` is a transform (it also accepts numeric strings), so a
 * response or body holding one is walked by TypeBox's transform encoder/decoder on every request; a plain
 * TypeBox integer is checked by the compiled validator alone. JSON bodies and responses carry real numbers,
 * so nothing is lost. Path and query parameters, which arrive as strings, keep `t.Integer` / `t.Numeric`.
 */
import { type IntegerOptions, Type } from "@sinclair/typebox";

export const JsonInteger = (options?: IntegerOptions) => Type.Integer(options);
