/**
 * Postgres array literals for set-based statements: a whole chunk travels as a few text parameters cast to
 * typed arrays (`$1::bigint[]`, `unnest(...)`) instead of thousands of bind parameters, which both drivers
 * (postgres.js and PGlite) pass as plain strings.
 */

/** `{"a","b\"c",NULL}`: every element quoted, so commas, braces, quotes and the word NULL stay data. */
export function textArray(values: readonly (string | null)[]): string {
  let out = "{";
  for (let i = 0; i < values.length; i++) {
    if (i > 0) out += ",";
    const v = values[i];
    out += v === null || v === undefined ? "NULL" : `"${v.replace(/[\\"]/g, "\\$&")}"`;
  }
  return `${out}}`;
}

/** `{1,2.5,3}` for finite numbers (ids, values); anything else is a programming error. */
export function numberArray(values: readonly number[]): string {
  for (const v of values) if (!Number.isFinite(v)) throw new Error(`not a finite number: ${v}`);
  return `{${values.join(",")}}`;
}
