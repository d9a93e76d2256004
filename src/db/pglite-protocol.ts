import type { MessagePort } from "node:worker_threads";
import type { PgliteAssets } from "./pglite-assets";

/**
 * Messages between the thread that serves requests and the worker thread that owns the embedded database
 * (pglite-worker.ts). Every request carries an id its answer repeats; notifications on a listened channel
 * come unasked.
 */
export type HostRequest =
  | {
      readonly op: "open";
      readonly id: number;
      readonly dataDir: string;
      readonly startParams: string[];
      /** PGlite's WebAssembly modules, compiled once per process (pglite-assets.ts), and its file bundle. */
      readonly assets: PgliteAssets;
      /** Where this and every later answer and notification is posted (transferred with this message). */
      readonly answers: MessagePort;
      /** A file to append the time per kind of statement to (see store-timings.ts). */
      readonly statementTimingsFile?: string | undefined;
    }
  | {
      readonly op: "query";
      readonly id: number;
      /** The transaction the statement runs in; absent: a statement of its own. */
      readonly tx?: number;
      readonly text: string;
      readonly params: unknown[];
      readonly rowMode?: "array" | "object";
    }
  | { readonly op: "begin"; readonly id: number }
  | { readonly op: "end"; readonly id: number; readonly tx: number; readonly commit: boolean }
  | { readonly op: "listen"; readonly id: number; readonly channel: string }
  | { readonly op: "unlisten"; readonly id: number; readonly channel: string }
  | { readonly op: "close"; readonly id: number };

export type HostMessage =
  | { readonly op: "answer"; readonly id: number; readonly value: unknown }
  | { readonly op: "failure"; readonly id: number; readonly error: CarriedError }
  | { readonly op: "notification"; readonly channel: string; readonly payload: string };

/** A database error's own fields (SQLSTATE, constraint, …), which a structured clone of the Error would drop. */
export interface CarriedError {
  readonly name: string;
  readonly message: string;
  readonly fields: Record<string, unknown>;
}

/** The fields of Postgres's error report that callers read (errors.ts, the unique-violation checks). */
const ERROR_FIELDS = [
  "code",
  "severity",
  "detail",
  "hint",
  "position",
  "where",
  "schema",
  "table",
  "column",
  "dataType",
  "constraint",
  "routine",
  "query",
  "params",
] as const;

export function carry(error: unknown): CarriedError {
  if (!(error instanceof Error)) return { name: "Error", message: String(error), fields: {} };
  const fields: Record<string, unknown> = {};
  const source = error as unknown as Record<string, unknown>;
  for (const field of ERROR_FIELDS) {
    const value = source[field];
    if (value !== undefined && value !== null)
      fields[field] = field === "params" ? [...(value as [])] : value;
  }
  return { name: error.name, message: error.message, fields };
}

/** The error again on this side, with the same name, message and fields. */
export function revive(carried: CarriedError): Error {
  const error = new Error(carried.message);
  error.name = carried.name;
  return Object.assign(error, carried.fields);
}
