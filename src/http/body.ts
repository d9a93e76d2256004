/**
 * How every request body is read: as a stream with a 10 MB cap (whatever its framing, Content-Length or
 * chunked), as JSON whatever its Content-Type says (a bare `curl -d` sends a form type), form and multipart
 * refused, and JSON nesting bounded before the text is parsed. Everything here runs before authentication, so
 * each check costs at most one pass over the bytes: a deeply nested body used to be turned into text by
 * validation until the stack overflowed, holding the process for seconds.
 *
 * Only the size cap is answered at once (413): past it the rest of the body is never read. A body refused
 * for what it holds (a form, JSON that does not parse or nests too deep, an unstorable string) comes back as
 * a RefusedBody, answered once the caller is authenticated and admitted (contract, "Order of checks"; see
 * ./request-values.ts).
 */
import { AppError, type ValidationIssue } from "../shared/errors";

export const MAX_BODY_BYTES = 10 * 1024 * 1024;
export const MAX_JSON_DEPTH = 32;

const tooLarge = () => new AppError("PAYLOAD_TOO_LARGE", "The request body exceeds 10 MB");
const invalid = (issue: ValidationIssue, message = "Request validation failed") =>
  new AppError("VALIDATION_ERROR", message, { detail: [issue] });

/**
 * The whole body as text, or a 413 as soon as it passes the cap. A body framed by Content-Length cannot
 * exceed what it declares, so a declared size within the cap is read natively in one go; any other body
 * (chunked) is read piece by piece and the rest never read once it passes the cap.
 */
export async function readCappedText(request: Request, cap = MAX_BODY_BYTES): Promise<string> {
  const stream = request.body;
  if (stream === null) return "";
  const declared = request.headers.get("content-length");
  if (declared !== null) {
    if (Number(declared) > cap) throw tooLarge();
    return request.text();
  }
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
  return new TextDecoder().decode(pieces.length === 1 ? pieces[0] : Buffer.concat(pieces, total));
}

const OPEN_BRACKET = 0x5b;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACKET = 0x5d;
const CLOSE_BRACE = 0x7d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * Whether JSON text nests arrays and objects deeper than `limit`, stopping as soon as it does. String
 * contents are skipped with indexOf (native), so the cost is one pass over the structure: 9 MB of catalogue
 * JSON is scanned in a few milliseconds.
 */
export function jsonDepthExceeds(text: string, limit = MAX_JSON_DEPTH): boolean {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code === QUOTE) {
      let end = text.indexOf('"', i + 1);
      while (end !== -1 && escaped(text, end)) end = text.indexOf('"', end + 1);
      // An unterminated string: JSON.parse refuses the text.
      if (end === -1) return false;
      i = end;
    } else if (code === OPEN_BRACKET || code === OPEN_BRACE) {
      if (++depth > limit) return true;
    } else if (code === CLOSE_BRACKET || code === CLOSE_BRACE) depth--;
  }
  return false;
}

/** Whether the character at `at` follows an odd run of backslashes. */
function escaped(text: string, at: number): boolean {
  let backslashes = 0;
  for (let k = at - 1; k >= 0 && text.charCodeAt(k) === BACKSLASH; k--) backslashes++;
  return backslashes % 2 === 1;
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

/** A body the service will not take, with the answer it gets once the caller has been admitted. */
export class RefusedBody {
  constructor(readonly error: AppError) {}
}

/**
 * The parsed JSON body of any request that has one. Form and multipart bodies are refused with 415; any
 * other type is read as JSON, and a body that is not JSON is refused with a 422 naming the body.
 */
export async function parseRequestBody(request: Request, contentType: string): Promise<unknown> {
  const text = await readCappedText(request);
  if (text.length === 0) return EMPTY_BODY;
  if (refusedMediaType(contentType)) {
    return new RefusedBody(
      new AppError(
        "UNSUPPORTED_MEDIA_TYPE",
        "Send the body as JSON (Content-Type: application/json); form and multipart bodies are not accepted",
      ),
    );
  }
  const encoding = request.headers.get("content-encoding")?.trim().toLowerCase();
  if (encoding !== undefined && encoding !== "" && encoding !== "identity") {
    // A compressed body would otherwise be read as text and refused as malformed JSON.
    return new RefusedBody(
      new AppError(
        "UNSUPPORTED_MEDIA_TYPE",
        "Send the body uncompressed: Content-Encoding is not accepted on requests",
      ),
    );
  }
  if (jsonDepthExceeds(text)) {
    return new RefusedBody(
      invalid({
        loc: ["body"],
        msg: `JSON nesting deeper than ${MAX_JSON_DEPTH} levels`,
        type: "value_error.depth",
      }),
    );
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return new RefusedBody(
      invalid(
        { loc: ["body"], msg: "Malformed JSON body", type: "value_error.jsondecode" },
        "The request body is not valid JSON",
      ),
    );
  }
  // NUL and surrogates can only be written in JSON as \u escapes: text without one needs no walk.
  const unstorable = text.includes("\\u") ? findUnstorableString(value) : undefined;
  if (unstorable !== undefined) {
    return new RefusedBody(
      invalid({
        loc: ["body", ...unstorable.map(String)],
        msg: UNSTORABLE_MESSAGE,
        type: "value_error.str",
      }),
    );
  }
  return value;
}
