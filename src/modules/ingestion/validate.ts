/**
 * Per-record validation for bulk ingestion, with the same TypeBox schemas as the single-record routes
 * (compiled once), plus the rules a schema cannot express.
 */
import type { TSchema } from "@sinclair/typebox";
import { TypeCompiler } from "@sinclair/typebox/compiler";
import { messageFor } from "../../http/validation-issues";
import { priceRangeProblem } from "../end-users/create";
import { EndUserCreate } from "../end-users/schemas";
import { timestampProblem } from "../interactions/create";
import { InteractionRecord } from "../interactions/schemas";
import { ProductCreate } from "../products/schemas";

export type Checked<T> = { ok: true; value: T } | { ok: false; message: string };

function checker<T>(schema: TSchema) {
  const compiled = TypeCompiler.Compile(schema);
  return (record: unknown): Checked<T> => {
    if (compiled.Check(record)) return { ok: true, value: record as T };
    const first = compiled.Errors(record).First();
    const field = first?.path.replace(/^\//, "").replaceAll("/", ".") ?? "";
    const message = first === undefined ? "Invalid record" : messageFor(first);
    return { ok: false, message: field === "" ? message : `${field}: ${message}` };
  };
}

const checkProductSchema = checker<typeof ProductCreate.static>(ProductCreate);
const checkUserSchema = checker<typeof EndUserCreate.static>(EndUserCreate);
const checkInteractionSchema = checker<typeof InteractionRecord.static>(InteractionRecord);

export const checkProduct = checkProductSchema;

export function checkUser(record: unknown): Checked<typeof EndUserCreate.static> {
  const checked = checkUserSchema(record);
  if (!checked.ok) return checked;
  const problem = priceRangeProblem(checked.value);
  return problem === undefined ? checked : { ok: false, message: problem };
}

export interface CheckedInteraction {
  externalUserId: string;
  externalProductId: string;
  type: string;
  value: number;
  /** A PURCHASE's revenue: its `value` when one was sent; without one the product's price (see `revenueOf`). */
  sentValue: number | undefined;
  occurredAt: Date;
  query: string | null;
  recommendationId: string | undefined;
}

export function checkInteraction(record: unknown, now: number): Checked<CheckedInteraction> {
  const checked = checkInteractionSchema(record);
  if (!checked.ok) return checked;
  const r = checked.value;
  const occurredAt = r.timestamp === undefined ? new Date(now) : new Date(r.timestamp);
  const problem = timestampProblem(occurredAt, now);
  if (problem !== undefined) return { ok: false, message: `timestamp: ${problem}` };
  return {
    ok: true,
    value: {
      externalUserId: r.external_user_id,
      externalProductId: r.external_product_id,
      type: r.interaction_type.toUpperCase(),
      value: r.value ?? 1,
      sentValue: r.value,
      occurredAt,
      query: r.query ?? null,
      recommendationId: r.recommendation_id,
    },
  };
}

/** The id a record error names: the externalId, or "{user}:{product}" for an interaction. */
export function recordKey(kind: "product" | "user" | "interaction", record: unknown): string {
  const r = (typeof record === "object" && record !== null ? record : {}) as Record<string, unknown>;
  const text = (v: unknown) => (typeof v === "string" || typeof v === "number" ? String(v) : "");
  return kind === "interaction"
    ? `${text(r.external_user_id)}:${text(r.external_product_id)}`
    : text(r.externalId);
}
