import { and, desc, eq } from "drizzle-orm";
import { experiments } from "../../db/schema";
import type { AppDeps } from "../../deps";
import type { TenantContext } from "../../http/auth";
import { notFound } from "../../shared/errors";
import { toExperiment } from "./record";
import type { Experiment } from "./schemas";

/** The account's experiments, newest first. */
export async function listExperiments({
  ctx,
  deps,
}: {
  ctx: TenantContext;
  deps: Pick<AppDeps, "database">;
}): Promise<{ items: Experiment[] }> {
  const rows = await deps.database.db
    .select()
    .from(experiments)
    .where(eq(experiments.accountId, ctx.accountId))
    .orderBy(desc(experiments.id));
  return { items: rows.map(toExperiment) };
}

/** One experiment of the account; another account's id is a 404. */
export async function getExperiment({
  ctx,
  deps,
  input,
}: {
  ctx: TenantContext;
  deps: Pick<AppDeps, "database">;
  input: { id: number };
}): Promise<Experiment> {
  const [row] = await deps.database.db
    .select()
    .from(experiments)
    .where(and(eq(experiments.accountId, ctx.accountId), eq(experiments.id, input.id)));
  if (row === undefined) throw notFound("Experiment");
  return toExperiment(row);
}
