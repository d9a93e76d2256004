import type { Database } from "../../db/client";
import { experiments } from "../../db/schema";
import type { TenantContext } from "../../http/tenant";
import { AppError, validationError } from "../../shared/errors";
import { isUniqueViolation } from "../auth/passwords";
import { toExperiment } from "./record";
import type { RunningExperiments } from "./running";
import type { Experiment, ExperimentCreate } from "./schemas";

/** Starts an experiment; a second running one on the same endpoint is a 409 (also when two race). */
export async function createExperiment({
  ctx,
  deps,
  input,
}: {
  ctx: TenantContext;
  deps: { readonly database: Database; readonly experiments: RunningExperiments };
  input: ExperimentCreate;
}): Promise<Experiment> {
  const names = input.variants.map((v) => v.name);
  const problems: { loc: (string | number)[]; msg: string; type: string }[] = [];
  if (new Set(names).size !== names.length) {
    problems.push({
      loc: ["body", "variants"],
      msg: "Variant names must be unique",
      type: "value_error.unique",
    });
  }
  const total = input.variants.reduce((sum, v) => sum + v.traffic, 0);
  if (Math.abs(total - 1) > 1e-6) {
    problems.push({
      loc: ["body", "variants"],
      msg: "Traffic shares must sum to 1",
      type: "value_error.sum",
    });
  }
  if (problems.length > 0) throw validationError(problems.map((p) => ({ ...p, loc: p.loc.map(String) })));
  let row: typeof experiments.$inferSelect | undefined;
  try {
    [row] = await deps.database.db
      .insert(experiments)
      .values({
        accountId: ctx.accountId,
        name: input.name,
        endpoint: input.endpoint,
        variants: input.variants,
        minimumEffect: input.minimum_effect ?? 0.1,
        status: "running",
      })
      .returning();
  } catch (error) {
    if (isUniqueViolation(error)) {
      throw new AppError("CONFLICT", `An experiment is already running on ${input.endpoint}; stop it first`);
    }
    throw error;
  }
  if (row === undefined) throw new Error("experiment insert returned no row");
  await deps.experiments.refresh();
  return toExperiment(row);
}
