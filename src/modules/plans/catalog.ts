/**
 * The plan table: built in, or replaced wholesale by PLANS_FILE. Loaded once at start-up; a bad file stops
 * start-up with a ConfigError naming PLANS_FILE.
 */
import { readFileSync } from "node:fs";
import { Value } from "@sinclair/typebox/value";
import { ConfigError } from "../../config";
import { PlanTable, type PlanTableType, type PlanType } from "./schemas";

export const FREE_PLAN = "FREE";

/** The bulk-ingestion rate every plan gets unless it sets its own (specification, section 8). */
export const DEFAULT_BULK_RATE = { perMinute: 10, perHour: 100, perDay: 1000 } as const;

export const BUILT_IN_PLANS: PlanTableType = {
  FREE: {
    name: "FREE",
    priceMonthly: 0,
    currency: "USD",
    limits: {
      requestsPerMinute: 60,
      monthlyRequests: 10_000,
      maxProducts: 1_000,
      maxEndUsers: 1_000,
      trainingsPerDay: 3,
    },
    features: ["All recommendation strategies", "Sandbox with demo data", "Community support"],
  },
  STARTER: {
    name: "STARTER",
    priceMonthly: 29,
    currency: "USD",
    limits: {
      requestsPerMinute: 300,
      monthlyRequests: 100_000,
      maxProducts: 10_000,
      maxEndUsers: 25_000,
      trainingsPerDay: 6,
    },
    features: ["All recommendation strategies", "Publishable keys for the browser", "E-mail support"],
  },
  PRO: {
    name: "PRO",
    priceMonthly: 99,
    currency: "USD",
    limits: {
      requestsPerMinute: 1_200,
      monthlyRequests: 1_000_000,
      maxProducts: 100_000,
      maxEndUsers: 250_000,
      trainingsPerDay: 24,
    },
    features: [
      "All recommendation strategies",
      "Publishable keys for the browser",
      "Training up to every hour (24 a day)",
      "Priority support",
    ],
  },
  ENTERPRISE: {
    name: "ENTERPRISE",
    priceMonthly: 499,
    currency: "USD",
    limits: {
      requestsPerMinute: 6_000,
      monthlyRequests: 10_000_000,
      maxProducts: 1_000_000,
      maxEndUsers: 5_000_000,
      trainingsPerDay: 96,
    },
    features: [
      "All recommendation strategies",
      "Publishable keys for the browser",
      "Training up to every 15 minutes (96 a day)",
      "Dedicated support",
    ],
  },
};

/**
 * The plan table as enforced and as `GET /plans/` shows it: PLANS_FILE read and validated (or the built-in
 * table when no file is set), with every plan's trainingsPerDay held to the operator's TRAININGS_PER_DAY.
 */
export function loadPlanTable(
  plansFile: string | undefined,
  trainingsPerDayCap?: number,
): Readonly<PlanTableType> {
  return deepFreeze(capTrainings(readPlanTable(plansFile), trainingsPerDayCap));
}

function capTrainings(table: PlanTableType, cap: number | undefined): PlanTableType {
  if (cap === undefined) return table;
  for (const plan of Object.values(table)) {
    plan.limits.trainingsPerDay = Math.min(plan.limits.trainingsPerDay, cap);
  }
  return table;
}

function readPlanTable(plansFile: string | undefined): PlanTableType {
  if (plansFile === undefined) return structuredClone(BUILT_IN_PLANS);
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(plansFile, "utf8"));
  } catch (error) {
    throw new ConfigError("PLANS_FILE", `${plansFile} is not readable JSON: ${(error as Error).message}`);
  }
  if (!Value.Check(PlanTable, parsed)) {
    const first = Value.Errors(PlanTable, parsed).First();
    const where = first?.path === undefined || first.path === "" ? "(root)" : first.path;
    throw new ConfigError("PLANS_FILE", `${plansFile}: ${where}: ${first?.message ?? "invalid plan table"}`);
  }
  const table = parsed as PlanTableType;
  for (const [key, plan] of Object.entries(table)) {
    if (plan.name !== key) {
      throw new ConfigError(
        "PLANS_FILE",
        `${plansFile}: plan "${key}" has name "${plan.name}"; they must match`,
      );
    }
  }
  // New accounts start on FREE and lapsed subscriptions fall back to it, so the table must have it.
  if (table[FREE_PLAN] === undefined) {
    throw new ConfigError("PLANS_FILE", `${plansFile}: the table must define the ${FREE_PLAN} plan`);
  }
  if (table[FREE_PLAN].priceMonthly !== 0) {
    throw new ConfigError("PLANS_FILE", `${plansFile}: the ${FREE_PLAN} plan must cost 0`);
  }
  return table;
}

export const isPaidPlan = (plan: PlanType): boolean => plan.priceMonthly > 0;

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === "object") {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}
