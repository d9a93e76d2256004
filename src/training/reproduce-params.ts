/**
 * Turns a stored model's `params` (what the engine's trainModel records) back into engine options that fit
 * that very configuration with the search off, on the current run's split (its seed, hold-out fraction and
 * evaluation settings), so the published model can be measured on the same hold-out as a new one.
 */
import type { EngineTrainOptions } from "./engine-types";

const WEIGHT_KEYS = [
  "view",
  "click",
  "cart",
  "purchase",
  "like",
  "dislike",
  "search",
  "rating",
  "ratingMax",
  "ratingPower",
] as const;
const ALS_KEYS = ["factors", "iterations", "regularization", "alpha", "cgSteps", "seed"] as const;
const BLEND_KEYS = ["cf", "als", "content", "popularity"] as const;

type NumberRecord<K extends string> = Record<K, number>;

function record(value: unknown): Record<string, unknown> | null {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : null;
}

function numbers<K extends string>(value: unknown, keys: readonly K[]): NumberRecord<K> | null {
  const source = record(value);
  if (source === null) return null;
  const out = {} as NumberRecord<K>;
  for (const key of keys) {
    const v = source[key];
    if (typeof v !== "number" || !Number.isFinite(v)) return null;
    out[key] = v;
  }
  return out;
}

/**
 * Engine options reproducing `params` on the run's split, or why that is impossible (e.g. a model stored
 * before the engine recorded one of these fields).
 */
export function reproduceOptions(
  params: Record<string, unknown>,
  run: EngineTrainOptions,
): EngineTrainOptions | string {
  const primary = params.primary;
  if (primary !== "ease" && primary !== "als") return "its params record no primary algorithm";
  const als = numbers(params.als, ALS_KEYS);
  if (als === null) return "its params do not record the ALS configuration";
  const blend = numbers(params.blend, BLEND_KEYS);
  if (blend === null) return "its params do not record the blend weights";
  const weights = numbers(params.weights, WEIGHT_KEYS);
  const halfLifeDays = record(params.weights)?.halfLifeDays;
  if (weights === null || !(halfLifeDays === "auto" || typeof halfLifeDays === "number")) {
    return "its params do not record the interaction weights";
  }
  const contentDims = params.contentDims;
  if (typeof contentDims !== "number") return "its params do not record the content dimensions";
  const options: EngineTrainOptions = {
    ...run,
    search: false,
    als: { ...run.als, ...als },
    blend,
    weights: { ...weights, halfLifeDays },
    contentDims,
    // 0 can never be met, so EASE is off; for EASE the run's own limit applies (at least the engine's 3).
    maxEaseMinSupport: primary === "ease" ? Math.max(3, run.maxEaseMinSupport ?? 3) : 0,
  };
  if (primary === "ease") {
    const { lambda, easeTargetItems } = params;
    if (typeof lambda !== "number" || typeof easeTargetItems !== "number") {
      return "its params do not record the EASE λ and item budget";
    }
    options.lambda = lambda;
    options.easeTargetItems = easeTargetItems;
    // Models stored before EASE weighed users record none: they counted every user alike.
    const { easeUserExponent } = params;
    options.easeUserExponent = typeof easeUserExponent === "number" ? easeUserExponent : 0;
  }
  return options;
}

/**
 * Whether two stored configurations fit the same model on the run's split: then their hold-out figures are
 * equal by construction and the second fit can be skipped.
 */
export function sameConfiguration(
  a: Record<string, unknown>,
  b: Record<string, unknown>,
  run: EngineTrainOptions,
): boolean {
  const x = reproduceOptions(a, run);
  const y = reproduceOptions(b, run);
  if (typeof x === "string" || typeof y === "string") return false;
  // The split's keys are the run's own (the same on both sides) and large: not part of a configuration.
  const { splitKeys: _x, ...xs } = x;
  const { splitKeys: _y, ...ys } = y;
  return JSON.stringify(canonical(xs)) === JSON.stringify(canonical(ys));
}

/** Key order must not make equal options look different. */
function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  const source = record(value);
  if (source === null) return value;
  return Object.fromEntries(
    Object.keys(source)
      .sort()
      .map((key) => [key, canonical(source[key])]),
  );
}
