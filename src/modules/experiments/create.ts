import type { Database } from "../../db/client";
import { experiments } from "../../db/schema";
import type { TenantContext } from "../../http/tenant";
import { AppError, validationError } from "../../shared/errors";
import type { ArtifactCache } from "../../snapshots/artifact-cache";
import { isUniqueViolation } from "../auth/passwords";
import { checkPinnedVersions } from "./pinned-models";
import { toExperiment } from "./record";
import type { RunningExperiments } from "./running";
import { ENDPOINT_OVERRIDES, type Experiment, type ExperimentCreate } from "./schemas";

/**
 * Starts an experiment; a second running one on the same endpoint is a 409 (also when two race). Each arm
 * may only override what acts on the endpoint, and a pinned model version must be servable (422 otherwise).
 */
export async function createExperiment({
  ctx,
  deps,
  input,
}: {
  ctx: TenantContext;
  deps: {
    readonly database: Database;
    readonly experiments: RunningExperiments;
    readonly artifacts: ArtifactCache;
  };
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
  const applicable: readonly string[] = ENDPOINT_OVERRIDES[input.endpoint];
  input.variants.forEach((arm, index) => {
    for (const key of Object.keys(arm.overrides ?? {})) {
      if (applicable.includes(key)) continue;
      problems.push({
        loc: ["body", "variants", index, "overrides", key],
        msg: `Does not apply to ${input.endpoint}; its arms may set ${applicable.join(", ")}`,
        type: "value_error.override_not_applicable",
      });
    }
  });
  if (problems.length === 0)
    problems.push(...(await checkPinnedVersions(deps, ctx.accountId, input.variants)));
  if (problems.length > 0) throw validationError(problems);
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
