/**
 * What a failed statement means for the caller, read from the error and its causes (drizzle wraps the
 * driver's error as `cause`): the caller's data (SQLSTATE class 22, data exception: a number or date out of
 * range, bad text for a type) or a store that cannot be reached. Anything else is our own fault.
 */
export type DatabaseFailure = "data" | "unavailable";

/** Connection-level failures: the server went away, refused us, or is shutting down. */
const UNAVAILABLE_CODES = new Set([
  "57P01", // admin_shutdown (pg_terminate_backend, a fast shutdown)
  "57P02", // crash_shutdown
  "57P03", // cannot_connect_now (starting up, or connections not allowed)
  "53300", // too_many_connections
  "3D000", // the database does not exist (dropped or renamed)
  "55000", // object_not_in_prerequisite_state: here, a database not accepting connections
  "CONNECTION_CLOSED",
  "CONNECTION_ENDED",
  "CONNECTION_DESTROYED",
  "CONNECT_TIMEOUT",
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EPIPE",
  "ENOTFOUND",
  "EHOSTUNREACH",
]);

/** The error itself and its causes, outermost first. */
function* chain(error: unknown): Generator<unknown> {
  let current = error;
  for (let depth = 0; depth < 6 && current !== undefined && current !== null; depth++) {
    yield current;
    current = (current as { cause?: unknown }).cause;
  }
}

/** The SQLSTATE (or connection error code) of a failed statement, if it carries one. */
export function databaseErrorCode(error: unknown): string | undefined {
  for (const link of chain(error)) {
    const code = (link as { code?: unknown }).code;
    if (typeof code === "string" && code.length > 0) return code;
  }
  return undefined;
}

export function classifyDatabaseError(error: unknown): DatabaseFailure | undefined {
  for (const link of chain(error)) {
    const code = (link as { code?: unknown }).code;
    if (typeof code === "string") {
      if (code.startsWith("22") && code.length === 5) return "data";
      if (code.startsWith("08") && code.length === 5) return "unavailable";
      if (UNAVAILABLE_CODES.has(code)) return "unavailable";
    }
    // PGlite closed under us (the store is shutting down or failed): nothing a retry later cannot fix.
    if (link instanceof Error && link.message === "PGlite is closed") return "unavailable";
  }
  return undefined;
}

/** Whether the error came from the database (it then may name values in its message or parameters). */
export function isDatabaseError(error: unknown): boolean {
  for (const link of chain(error)) {
    const name = (link as { name?: unknown }).name;
    if (
      name === "PostgresError" ||
      name === "DrizzleQueryError" ||
      link?.constructor?.name === "DrizzleQueryError"
    )
      return true;
    if (typeof (link as { severity?: unknown }).severity === "string") return true;
    if (typeof (link as { query?: unknown }).query === "string") return true;
  }
  return false;
}
