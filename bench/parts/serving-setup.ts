/** The serving bench's tenant, seeded and trained through the API, and the experiment run on it. */
import type { SyntheticDataset } from "../data/synthetic";
import { type ApiClient, ingestSynthetic, routeMissing, trainAndWait } from "../lib/api";
import type { LoadResult } from "../lib/load";
import { type BenchContext, NotAvailable } from "../lib/types";

/**
 * The shop mix again with an A/A experiment running on the personalised query (two arms of the same
 * parameters, half the users each), so each answer is assigned, labelled and logged under its arm: the
 * cost of online evaluation. The experiment is stopped afterwards. Null: the service has no experiments.
 */
export async function experimentRow<R extends LoadResult>(
  client: ApiClient,
  routes: Set<string>,
  run: () => Promise<R>,
): Promise<R | null> {
  if (routeMissing(routes, "POST", "/api/v1/experiments")) return null;
  const created = await client.expect(
    "POST",
    "/api/v1/experiments",
    {
      name: "bench A/A",
      endpoint: "personalized/query",
      variants: [
        { name: "control", traffic: 0.5 },
        { name: "b", traffic: 0.5, overrides: { strategy: "hybrid" } },
      ],
    },
    [200, 201],
  );
  try {
    return await run();
  } finally {
    await client.expect("POST", `/api/v1/experiments/${created.id}/stop`, {}, [200]);
  }
}

export async function seedTenant(
  ctx: BenchContext,
  client: ApiClient,
  routes: Set<string>,
  data: SyntheticDataset,
  notes: string[],
): Promise<void> {
  const missing = routeMissing(routes, "POST", "/api/v1/ingestion/batch");
  if (missing)
    throw new NotAvailable(`${missing.replace("not available yet: ", "")} (needed to seed the tenant)`);
  const { seconds, recordErrors } = await ingestSynthetic(client, data);
  ctx.log(`seeded in ${seconds.toFixed(1)} s`);
  notes.push(
    `seeding through the batch route: ${seconds.toFixed(1)} s${recordErrors ? `, ${recordErrors} record errors` : ""}`,
  );
}

export async function trainTenant(
  ctx: BenchContext,
  client: ApiClient,
  routes: Set<string>,
  notes: string[],
): Promise<void> {
  const missing = routeMissing(routes, "POST", "/api/v1/pipeline/train");
  if (missing) {
    notes.push(`no trained model: ${missing}; routes answer from their no-model fallback`);
    return;
  }
  const started = performance.now();
  const job = await trainAndWait(client, 1_800_000);
  const seconds = (performance.now() - started) / 1000;
  ctx.log(`trained in ${seconds.toFixed(1)} s`);
  notes.push(
    `training through the API: ${seconds.toFixed(1)} s (job ${job.jobId}, model ${job.modelId ?? "?"})`,
  );
}
