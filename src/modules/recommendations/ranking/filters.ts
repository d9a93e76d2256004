/**
 * Compiles a request's `filters` once into a predicate over an ItemTable's typed arrays. Field/op/value
 * combinations that make no sense are 422s naming the offending condition, never silently ignored.
 */

import { categoryMatcher, type ItemPredicate } from "../../../engine/ranking/catalogue";
import { AppError, type ValidationIssue, validationError } from "../../../shared/errors";
import type { FilterGroup, FilterOp } from "../schemas";
import type { ItemTable } from "../serving/item-table";
import { valueCodes } from "../serving/serving-cache";

type Condition = FilterGroup["filters"][number];

const NUMERIC_OPS: readonly FilterOp[] = ["eq", "ne", "lt", "lte", "gt", "gte", "in", "nin"];
const STRING_OPS: readonly FilterOp[] = ["eq", "ne", "in", "nin", "contains"];

/** Returns null when there is nothing to filter. Throws VALIDATION_ERROR (422) with one issue per bad condition. */
export function compileFilters(
  group: FilterGroup | undefined,
  table: ItemTable,
  attributes: ItemAttributes = [],
): ItemPredicate | null {
  if (group === undefined || group.filters.length === 0) return null;
  const issues: ValidationIssue[] = [];
  const compiled: ItemPredicate[] = [];
  const budget = new WorkBudget(FILTER_WORK_BUDGET);
  group.filters.forEach((condition, index) => {
    const loc = ["body", "filters", "filters", index];
    try {
      compiled.push(compileCondition(condition, table, attributes, budget));
    } catch (error) {
      if (!(error instanceof FilterError)) throw error;
      issues.push({ loc: [...loc, error.part], msg: error.message, type: "value_error.filter" });
    }
  });
  if (issues.length > 0) throw validationError(issues, "Invalid recommendation filter");
  if (compiled.length === 1) return compiled[0]!;
  if (group.logic === "or") return (i) => compiled.some((p) => p(i));
  return (i) => compiled.every((p) => p(i));
}

export type ItemAttributes = readonly (Readonly<Record<string, unknown>> | undefined)[];

/** At most this many values in an `in`/`nin` list. */
export const MAX_LIST_VALUES = 1000;

/**
 * The most work one request's filters may do, in units of one condition tested on one item plus one per
 * character a `contains` reads. 50 conditions over a catalogue of 100,000 products cost 5 million; the bound
 * stops a request long before it could hold the process (a `contains` over megabyte attributes took 0.8 s).
 */
export const FILTER_WORK_BUDGET = 50_000_000;

class WorkBudget {
  constructor(private left: number) {}
  spend(units: number): void {
    this.left -= units;
    if (this.left < 0) {
      throw new AppError("VALIDATION_ERROR", "The filters need more work than one request may do", {
        detail: [
          {
            loc: ["body", "filters"],
            msg: "too costly for this catalogue: use fewer conditions or fewer contains on long attributes",
            type: "value_error.cost",
          },
        ],
      });
    }
  }
}

/**
 * A catalogue's attribute column with every string lower-cased (arrays element by element), made once per
 * loaded column and kept as long as that column is: `contains` used to lower-case every attribute again for
 * every condition of every request.
 */
const loweredColumns = new WeakMap<ItemAttributes, ItemAttributes>();

function lowerCased(attributes: ItemAttributes): ItemAttributes {
  let lowered = loweredColumns.get(attributes);
  if (lowered === undefined) {
    lowered = attributes.map((record) => {
      if (record === undefined) return undefined;
      const copy: Record<string, unknown> = {};
      for (const [key, value] of Object.entries(record)) {
        copy[key] =
          typeof value === "string"
            ? value.toLowerCase()
            : Array.isArray(value)
              ? value.map((e) => (typeof e === "string" ? e.toLowerCase() : e))
              : value;
      }
      return copy;
    });
    loweredColumns.set(attributes, lowered);
  }
  return lowered;
}

/** Attribute filters need the (lazily loaded) attribute column; other filters never pay for it. */
export function needsAttributes(group: FilterGroup | undefined): boolean {
  return group?.filters.some((f) => f.field.startsWith("attributes.")) ?? false;
}

class FilterError extends Error {
  constructor(
    readonly part: "field" | "op" | "value",
    message: string,
  ) {
    super(message);
  }
}

function compileCondition(
  condition: Condition,
  table: ItemTable,
  attributes: ItemAttributes,
  budget: WorkBudget,
): ItemPredicate {
  const test = conditionTest(condition, table, attributes, budget);
  return (i) => {
    budget.spend(1);
    return test(i);
  };
}

function conditionTest(
  { field, op, value }: Condition,
  table: ItemTable,
  attributes: ItemAttributes,
  budget: WorkBudget,
): ItemPredicate {
  if (Array.isArray(value) && value.length > MAX_LIST_VALUES) {
    throw new FilterError("value", `in/nin take at most ${MAX_LIST_VALUES} values`);
  }
  switch (field) {
    case "price":
      return numeric(op, value, field, table.prices);
    case "rating":
      return numeric(op, value, field, table.rating);
    case "in_stock": {
      if (op !== "eq" && op !== "ne") throw badOp(field, op, ["eq", "ne"]);
      if (typeof value !== "boolean") throw new FilterError("value", "in_stock takes true or false");
      const want = value === (op === "eq") ? 1 : 0;
      return (i) => table.inStock[i] === want;
    }
    case "category":
      return category(op, value, table);
    case "brand":
      return brand(op, value, table);
  }
  if (field.startsWith("attributes.") && field.length > "attributes.".length) {
    return attribute(field.slice("attributes.".length), op, value, attributes, budget);
  }
  throw new FilterError("field", `Unknown filter field "${field}"`);
}

function badOp(field: string, op: string, allowed: readonly string[]): FilterError {
  return new FilterError(
    "op",
    `Operator "${op}" does not apply to ${field}; use one of ${allowed.join(", ")}`,
  );
}

function numberList(value: unknown, field: string): number[] {
  if (
    !Array.isArray(value) ||
    value.length === 0 ||
    !value.every((v) => typeof v === "number" && Number.isFinite(v))
  )
    throw new FilterError("value", `${field} with in/nin takes a non-empty array of numbers`);
  return value as number[];
}

function stringList(value: unknown, field: string): string[] {
  if (!Array.isArray(value) || value.length === 0 || !value.every((v) => typeof v === "string"))
    throw new FilterError("value", `${field} with in/nin takes a non-empty array of strings`);
  return value as string[];
}

function numeric(
  op: FilterOp,
  value: unknown,
  field: string,
  column: Float64Array | Float32Array,
): ItemPredicate {
  if (!NUMERIC_OPS.includes(op)) throw badOp(field, op, NUMERIC_OPS);
  if (op === "in" || op === "nin") {
    const set = new Set(numberList(value, field));
    return op === "in" ? (i) => set.has(column[i]!) : (i) => !set.has(column[i]!);
  }
  if (typeof value !== "number" || !Number.isFinite(value))
    throw new FilterError("value", `${field} takes a number`);
  // Float32 columns (rating) compare against the same rounding so eq 4.2 matches a stored 4.2.
  const v = column instanceof Float32Array ? Math.fround(value) : value;
  switch (op) {
    case "eq":
      return (i) => column[i] === v;
    case "ne":
      return (i) => column[i] !== v;
    case "lt":
      return (i) => column[i]! < v;
    case "lte":
      return (i) => column[i]! <= v;
    case "gt":
      return (i) => column[i]! > v;
    default:
      return (i) => column[i]! >= v;
  }
}

function category(op: FilterOp, value: unknown, table: ItemTable): ItemPredicate {
  if (!STRING_OPS.includes(op)) throw badOp("category", op, STRING_OPS);
  let matches: (path: string) => boolean;
  if (op === "contains") {
    if (typeof value !== "string") throw new FilterError("value", "category contains takes a string");
    const needle = value.toLowerCase();
    matches = (path) => path.toLowerCase().includes(needle);
  } else if (op === "in" || op === "nin") {
    matches = categoryMatcher(stringList(value, "category"));
  } else if (typeof value === "string") {
    matches = categoryMatcher([value]);
  } else {
    throw new FilterError("value", "category takes a string");
  }
  const positive = op !== "ne" && op !== "nin";
  // Made on the first call: a request whose filter result is cached never evaluates the predicate.
  let hits: Uint8Array | null = null;
  return (i) => {
    hits ??= hitsByCode(table, "categories", matches);
    return (hits[i] === 1) === positive;
  };
}

function brand(op: FilterOp, value: unknown, table: ItemTable): ItemPredicate {
  if (!STRING_OPS.includes(op)) throw badOp("brand", op, STRING_OPS);
  let test: (name: string) => boolean;
  if (op === "contains") {
    if (typeof value !== "string") throw new FilterError("value", "brand contains takes a string");
    const needle = value.toLowerCase();
    test = (name) => name.toLowerCase().includes(needle);
  } else {
    let wanted: string[];
    if (op === "in" || op === "nin") wanted = stringList(value, "brand");
    else if (typeof value === "string") wanted = [value];
    else throw new FilterError("value", "brand takes a string");
    const set = new Set(wanted.map((b) => b.toLowerCase()));
    test = (name) => set.has(name.toLowerCase());
  }
  const positive = op === "eq" || op === "in" || op === "contains";
  let hits: Uint8Array | null = null;
  return (i) => {
    hits ??= hitsByCode(table, "brands", test);
    return (hits[i] === 1) === positive;
  };
}

/**
 * Category and brand strings repeat across items: each distinct value is tested once per request, and the
 * answer spread to the items through the table's codes. 1 = the item's value passes (an item without a
 * value never does).
 */
function hitsByCode(
  table: ItemTable,
  column: "categories" | "brands",
  test: (value: string) => boolean,
): Uint8Array {
  const { codes, values } = valueCodes(table, column);
  const valueHits = new Uint8Array(values.length);
  for (let c = 0; c < values.length; c++) valueHits[c] = test(values[c]!) ? 1 : 0;
  const hits = new Uint8Array(codes.length);
  for (let i = 0; i < codes.length; i++) {
    const code = codes[i]!;
    if (code >= 0) hits[i] = valueHits[code]!;
  }
  return hits;
}

type Scalar = string | number | boolean;
const isScalar = (v: unknown): v is Scalar =>
  typeof v === "string" || typeof v === "boolean" || (typeof v === "number" && Number.isFinite(v));

function attribute(
  key: string,
  op: FilterOp,
  value: unknown,
  attributes: ItemAttributes,
  budget: WorkBudget,
): ItemPredicate {
  const read = (i: number): unknown => attributes[i]?.[key];
  switch (op) {
    case "eq":
    case "ne": {
      if (!isScalar(value))
        throw new FilterError("value", `attributes.${key} ${op} takes a string, number or boolean`);
      const eq = (i: number) => read(i) === value;
      return op === "eq" ? eq : (i) => !eq(i);
    }
    case "in":
    case "nin": {
      if (!Array.isArray(value) || value.length === 0 || !value.every(isScalar))
        throw new FilterError("value", `attributes.${key} ${op} takes a non-empty array of scalars`);
      const set = new Set<unknown>(value);
      return op === "in" ? (i) => set.has(read(i)) : (i) => !set.has(read(i));
    }
    case "contains": {
      if (!isScalar(value)) throw new FilterError("value", `attributes.${key} contains takes a scalar`);
      const needle = typeof value === "string" ? value.toLowerCase() : value;
      const lowered = lowerCased(attributes);
      return (i) => {
        const v = lowered[i]?.[key];
        if (typeof v === "string") {
          if (typeof needle !== "string") return false;
          budget.spend(v.length);
          return v.includes(needle);
        }
        if (!Array.isArray(v)) return false;
        budget.spend(v.length);
        return v.includes(needle);
      };
    }
    default: {
      if (typeof value !== "number" || !Number.isFinite(value))
        throw new FilterError("value", `attributes.${key} ${op} takes a number`);
      const cmp: Record<string, (a: number) => boolean> = {
        lt: (a) => a < value,
        lte: (a) => a <= value,
        gt: (a) => a > value,
        gte: (a) => a >= value,
      };
      const f = cmp[op]!;
      return (i) => {
        const v = read(i);
        return typeof v === "number" && f(v);
      };
    }
  }
}
