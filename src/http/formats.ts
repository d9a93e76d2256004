/**
 * The "uuid" string format, checked in every recommendation answer (its `recommendationId`) and in the
 * interactions that credit one. `@elysiajs/openapi` registers TypeBox's format checks through Zod, building a
 * new Zod schema on every call: about 3% of a busy server's CPU. This is the same test (Zod's pattern) with
 * the expression compiled once. Called after `@elysiajs/openapi` has loaded, so this registration is the one
 * that stays.
 */
import { FormatRegistry } from "@sinclair/typebox";

const UUID =
  /^([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[1-8][0-9a-fA-F]{3}-[89abAB][0-9a-fA-F]{3}-[0-9a-fA-F]{12}|00000000-0000-0000-0000-000000000000|ffffffff-ffff-ffff-ffff-ffffffffffff)$/;

export function registerHotFormats(): void {
  FormatRegistry.Set("uuid", (value) => UUID.test(value));
}
