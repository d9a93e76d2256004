import { and, eq, sql } from "drizzle-orm";
import type { Database } from "../../db/client";
import { experiments } from "../../db/schema";
import type { TenantContext } from "../../http/tenant";
import { getExperiment } from "./list";
import { toExperiment } from "./record";
import type { RunningExperiments } from "./running";
import type { Experiment } from "./schemas";

/** Stops an experiment (its results stay readable); stopping a stopped one changes nothing. */
export async function stopExperiment({
  ctx,
  deps,
  input,
}: {
  ctx: TenantContext;
  deps: { readonly database: Database; readonly experiments: RunningExperiments };
  input: { id: number };
}): Promise<Experiment> {
  const [row] = await deps.database.db
    .update(experiments)
    .set({ status: "stopped", stoppedAt: sql`now()` })
    .where(
      and(
        eq(experiments.accountId, ctx.accountId),
        eq(experiments.id, input.id),
        eq(experiments.status, "running"),
      ),
    )
    .returning();
  if (row === undefined) return getExperiment({ ctx, deps, input });
  await deps.experiments.refresh();
  return toExperiment(row);
}
