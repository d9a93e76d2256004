import { and, desc, eq } from "drizzle-orm";
import type { Database } from "../../db/client";
import { experiments } from "../../db/schema";
import type { TenantContext } from "../../http/tenant";
import { notFound } from "../../shared/errors";
import { toExperiment } from "./record";
import type { Experiment } from "./schemas";

/** The account's experiments, newest first. */
export async function listExperiments({
  ctx,
  deps,
}: {
  ctx: TenantContext;
  deps: { readonly database: Database };
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
  deps: { readonly database: Database };
  input: { id: number };
}): Promise<Experiment> {
  const [row] = await deps.database.db
    .select()
    .from(experiments)
    .where(and(eq(experiments.accountId, ctx.accountId), eq(experiments.id, input.id)));
  if (row === undefined) throw notFound("Experiment");
  return toExperiment(row);
}
