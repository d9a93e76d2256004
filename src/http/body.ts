/**
 * How every request body is read: as a stream with a 10 MB cap (whatever its framing, Content-Length or
 * chunked), as JSON whatever its Content-Type says (a bare `curl -d` sends a form type), form and multipart
 * refused, and JSON nesting bounded before the text is parsed. Everything here runs before authentication, so
 * each check costs at most one pass over the bytes: a deeply nested body used to be turned into text by
 * validation until the stack overflowed, holding the process for seconds.
 */
import { AppError, type ValidationIssue } from "../shared/errors";

export const MAX_BODY_BYTES = 10 * 1024 * 1024;
export const MAX_JSON_DEPTH = 32;

const tooLarge = () => new AppError("PAYLOAD_TOO_LARGE", "The request body exceeds 10 MB");
const invalid = (issue: ValidationIssue, message = "Request validation failed") =>
  new AppError("VALIDATION_ERROR", message, { detail: [issue] });

/** The whole body, or a 413 as soon as it passes the cap (the rest is never read). */
export async function readCapped(request: Request, cap = MAX_BODY_BYTES): Promise<Uint8Array> {
  const stream = request.body;
  if (stream === null) return new Uint8Array(0);
  const declared = Number(request.headers.get("content-length") ?? Number.NaN);
  if (declared > cap) throw tooLarge();
  const reader = stream.getReader();
  const pieces: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > cap) {
      void reader.cancel().catch(() => {});
      throw tooLarge();
    }
    pieces.push(value);
  }
  if (pieces.length === 1) return pieces[0] as Uint8Array;
  const bytes = new Uint8Array(total);
  let at = 0;
  for (const piece of pieces) {
    bytes.set(piece, at);
    at += piece.byteLength;
  }
  return bytes;
}

const OPEN_BRACKET = 0x5b;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACKET = 0x5d;
const CLOSE_BRACE = 0x7d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** The deepest nesting of arrays and objects in JSON text, stopping once it passes `limit`. */
export function jsonDepthExceeds(bytes: Uint8Array, limit = MAX_JSON_DEPTH): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < bytes.length; i++) {
    const byte = bytes[i];
    if (inString) {
      if (byte === BACKSLASH) i++;
      else if (byte === QUOTE) inString = false;
    } else if (byte === QUOTE) inString = true;
    else if (byte === OPEN_BRACKET || byte === OPEN_BRACE) {
      if (++depth > limit) return true;
    } else if (byte === CLOSE_BRACKET || byte === CLOSE_BRACE) depth--;
  }
  return false;
}

/**
 * The first string (value or key) holding NUL or an unpaired surrogate, as its location; Postgres refuses
 * both in text and JSON columns, and neither has a use in a catalogue. Depth is bounded before this runs.
 */
export function findUnstorableString(
  value: unknown,
  at: (string | number)[] = [],
): (string | number)[] | undefined {
  if (typeof value === "string") return isStorable(value) ? undefined : at;
  if (typeof value !== "object" || value === null) return undefined;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = findUnstorableString(value[i], [...at, i]);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  for (const [key, item] of Object.entries(value)) {
    if (!isStorable(key)) return [...at, key];
    const found = findUnstorableString(item, [...at, key]);
    if (found !== undefined) return found;
  }
  return undefined;
}

export const isStorable = (text: string): boolean => !text.includes("\u0000") && text.isWellFormed();

export const UNSTORABLE_MESSAGE = "must not contain NUL characters or unpaired UTF-16 surrogates";

/** A body we read as JSON: explicit JSON types, none at all, and text types (a JSON body sent as text/plain). */
function refusedMediaType(contentType: string): boolean {
  const type = contentType.toLowerCase();
  return type === "application/x-www-form-urlencoded" || type.startsWith("multipart/");
}

/** Returned for an empty body, which Elysia would otherwise try to parse again by its Content-Type. */
export const EMPTY_BODY = Symbol("empty-body");

/**
 * The parsed JSON body of any request that has one. Form and multipart bodies are 415; any other type is
 * read as JSON, and a body that is not JSON is a 422 naming the body.
 */
export async function parseRequestBody(request: Request, contentType: string): Promise<unknown> {
  const bytes = await readCapped(request);
  if (bytes.byteLength === 0) return EMPTY_BODY;
  if (refusedMediaType(contentType)) {
    throw new AppError(
      "UNSUPPORTED_MEDIA_TYPE",
      "Send the body as JSON (Content-Type: application/json); form and multipart bodies are not accepted",
    );
  }
  if (jsonDepthExceeds(bytes)) {
    throw invalid({
      loc: ["body"],
      msg: `JSON nesting deeper than ${MAX_JSON_DEPTH} levels`,
      type: "value_error.depth",
    });
  }
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    throw invalid(
      { loc: ["body"], msg: "Malformed JSON body", type: "value_error.jsondecode" },
      "The request body is not valid JSON",
    );
  }
  const unstorable = findUnstorableString(value);
  if (unstorable !== undefined) {
    throw invalid({
      loc: ["body", ...unstorable.map(String)],
      msg: UNSTORABLE_MESSAGE,
      type: "value_error.str",
    });
  }
  return value;
}
