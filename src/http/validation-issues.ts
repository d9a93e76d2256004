/**
 * 422 details a person can act on: `loc` names where the value was (`["query", "limit"]`,
 * `["body", "filters", "filters", 0, "op"]`), one entry per field, allowed values listed for enums, and a
 * pattern said in words (a schema's `x-expected`) instead of a regular expression.
 */
import { ValueErrorType } from "@sinclair/typebox/errors";
import type { ValidationError } from "elysia";
import { AppError, type ValidationIssue } from "../shared/errors";

type Where = "body" | "query" | "path" | "headers" | "cookie";

interface TypeBoxError {
  type?: number;
  path?: string;
  message?: string;
  schema?: Record<string, unknown>;
}

/** "/filters/filters/0/op" → ["filters", "filters", 0, "op"] (JSON Pointer, with its ~1 and ~0 escapes). */
function pointerToLoc(pointer: string): (string | number)[] {
  return pointer
    .split("/")
    .filter((part) => part !== "")
    .map((part) => part.replaceAll("~1", "/").replaceAll("~0", "~"))
    .map((part) => (/^(0|[1-9][0-9]*)$/.test(part) ? Number(part) : part));
}

/** The allowed values of an enum-like schema (a union of literals, or `enum`), if it is one. */
function allowedValues(schema: Record<string, unknown> | undefined): string[] | undefined {
  if (schema === undefined) return undefined;
  if (Array.isArray(schema.enum)) return schema.enum.map(String);
  const members = schema.anyOf;
  if (!Array.isArray(members) || members.length === 0) return undefined;
  const values: string[] = [];
  for (const member of members as Record<string, unknown>[]) {
    if (member.const !== undefined) values.push(String(member.const));
    else if (member.type === "null") values.push("null");
    else return undefined;
  }
  return values;
}

/** What a TypeBox error means in words (no regular expressions): also used for bulk record errors. */
export function messageFor(error: TypeBoxError): string {
  const schema = error.schema;
  switch (error.type) {
    case ValueErrorType.ObjectRequiredProperty:
      return "is required";
    case ValueErrorType.ObjectAdditionalProperties:
      return "is not an accepted field";
    case ValueErrorType.Kind:
    case ValueErrorType.StringPattern:
      return `must be ${typeof schema?.["x-expected"] === "string" ? schema["x-expected"] : "in the documented format"}`;
    case ValueErrorType.StringFormat:
      return `must be a valid ${String(schema?.format ?? "value")}`;
    case ValueErrorType.StringMaxLength:
      return `must be at most ${String(schema?.maxLength)} characters`;
    case ValueErrorType.StringMinLength:
      return `must be at least ${String(schema?.minLength)} character${schema?.minLength === 1 ? "" : "s"}`;
    case ValueErrorType.ArrayMaxItems:
      return `must have at most ${String(schema?.maxItems)} items`;
    case ValueErrorType.ArrayMinItems:
      return `must have at least ${String(schema?.minItems)} items`;
    case ValueErrorType.ObjectMaxProperties:
      return `must have at most ${String(schema?.maxProperties)} keys`;
    case ValueErrorType.Union:
    case ValueErrorType.Literal: {
      const allowed =
        allowedValues(schema) ?? (schema?.const !== undefined ? [String(schema.const)] : undefined);
      if (allowed !== undefined) return `must be one of: ${allowed.join(", ")}`;
      return "does not match any accepted form";
    }
  }
  // TypeBox's own wording ("Expected integer to be greater or equal to 1") names no regular expression.
  return error.message ?? "is invalid";
}

/**
 * The issue's `type`: the check that failed, by name (`value_error.object_required_property`,
 * `value_error.string_max_length`, `value_error.number_exclusive_minimum`), not TypeBox's number for it.
 */
function typeOf(error: TypeBoxError): string {
  const name = error.type === undefined ? undefined : ValueErrorType[error.type];
  if (name === undefined) return "value_error";
  return `value_error.${name.replace(/([a-z0-9])([A-Z])/g, "$1_$2").toLowerCase()}`;
}

/** One issue per location: TypeBox reports a missing field twice (required, then wrong type). */
export function issuesOf(error: ValidationError): ValidationIssue[] {
  const where: Where = error.type === "params" ? "path" : (error.type as Where);
  const seen = new Set<string>();
  const issues: ValidationIssue[] = [];
  for (const entry of error.all as TypeBoxError[]) {
    const loc = [where, ...pointerToLoc(typeof entry.path === "string" ? entry.path : "")];
    const key = JSON.stringify(loc);
    if (seen.has(key)) continue;
    seen.add(key);
    issues.push({ loc, msg: messageFor(entry), type: typeOf(entry) });
  }
  return issues.length > 0 ? issues : [{ loc: [where], msg: "is invalid", type: "value_error" }];
}

/** The largest id and offset the store holds (Postgres integer). */
export const MAX_INT32 = 2 ** 31 - 1;

/** A numeric query or path parameter of a route and the values it accepts, compiled once per route. */
export interface NumericParameter {
  readonly name: string;
  readonly integer: boolean;
  readonly minimum: number;
  readonly maximum: number;
}

/** The numeric rule of a query or path property (Elysia's t.Integer/t.Numeric are unions with a number). */
function numericParameter(name: string, schema: Record<string, unknown>): NumericParameter | undefined {
  const members = Array.isArray(schema.anyOf) ? (schema.anyOf as Record<string, unknown>[]) : [schema];
  const numeric = members.find((member) => member.type === "integer" || member.type === "number");
  if (numeric === undefined) return undefined;
  const integer = numeric.type === "integer" || numeric.multipleOf === 1;
  const lower = [numeric.minimum, numeric.exclusiveMinimum].filter((v): v is number => typeof v === "number");
  const upper = [numeric.maximum, numeric.exclusiveMaximum].filter((v): v is number => typeof v === "number");
  return {
    name,
    integer,
    minimum: lower.length > 0 ? Math.max(...lower) : integer ? 0 : -Number.MAX_VALUE,
    // Every integer a client sends us is an id, an offset or a count: none exceeds a Postgres integer.
    maximum: upper.length > 0 ? Math.min(...upper) : integer ? MAX_INT32 : Number.MAX_VALUE,
  };
}

/** The numeric parameters of a route's query or path schema. */
export function numericParameters(schema: unknown): NumericParameter[] {
  const properties = (schema as { properties?: Record<string, Record<string, unknown>> } | undefined)
    ?.properties;
  if (properties === undefined) return [];
  const parameters: NumericParameter[] = [];
  for (const [name, property] of Object.entries(properties)) {
    const parameter = numericParameter(name, property);
    if (parameter !== undefined) parameters.push(parameter);
  }
  return parameters;
}

const INTEGER_TEXT = /^-?[0-9]+$/;

/**
 * Checks the numeric query and path parameters before Elysia decodes them: its decoder reports a bad value
 * without saying which parameter held it, and a value past 2^31-1 would reach SQL. A path id out of range
 * names no record (404); a query value out of range is a 422 naming the parameter.
 */
export function checkNumericParameters(
  where: "query" | "path",
  parameters: readonly NumericParameter[],
  values: Record<string, unknown> | undefined,
): void {
  if (values === undefined) return;
  let issues: ValidationIssue[] | undefined;
  for (let i = 0; i < parameters.length; i++) {
    const rule = parameters[i] as NumericParameter;
    const raw = values[rule.name];
    if (typeof raw !== "string") continue;
    const value = Number(raw);
    const wellFormed = raw.trim() !== "" && (rule.integer ? INTEGER_TEXT.test(raw) : Number.isFinite(value));
    const inRange = wellFormed && value >= rule.minimum && value <= rule.maximum;
    if (inRange) continue;
    if (where === "path" && wellFormed) throw new AppError("NOT_FOUND", "Not found");
    const kind = rule.integer ? "an integer" : "a number";
    issues ??= [];
    issues.push({
      loc: [where, rule.name],
      msg: `must be ${kind} from ${rule.minimum} to ${rule.maximum}`,
      type: wellFormed ? "value_error.range" : "value_error.number",
    });
  }
  if (issues !== undefined)
    throw new AppError("VALIDATION_ERROR", "Request validation failed", { detail: issues });
}
