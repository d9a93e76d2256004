import { Elysia, t } from "elysia";
import type { AppDeps } from "../../app-deps";
import { authPlugin } from "../../http/auth";
import { ELYSIA_CONFIG } from "../../http/kernel";
import type { ServiceModule } from "../module";
import { remainingCatalogueCapacity } from "../plans/limits";
import { getBatchJob } from "./get";
import { listBatchJobs } from "./list";
import { ingestionJobKind } from "./process";
import { BatchAccepted, BatchJobStatus, BatchListQuery, BatchPath, BatchRequest } from "./schemas";
import { submitBatch } from "./submit";

const tags = ["Bulk ingestion"];

function ingestionRoutes(deps: AppDeps) {
  return new Elysia({ ...ELYSIA_CONFIG, name: "ingestion", prefix: "/api/v1/ingestion" })
    .use(authPlugin(deps))
    .post(
      "/batch",
      async ({ tenant, body, set }) => {
        const accepted = await submitBatch({ ctx: tenant, deps, input: body });
        set.status = 202;
        return accepted;
      },
      {
        auth: { mode: "keyOrJwt" },
        body: BatchRequest,
        response: { 202: BatchAccepted },
        detail: {
          tags,
          summary: "Submit a batch of products, end users and interactions",
          description:
            "Accepted at once (202) and applied in the background: products and end users are upserted by " +
            "externalId, then interactions are inserted. Each record is validated on its own: invalid ones are " +
            "listed in the job's errors and the valid ones stay applied; new products and end users past the plan's " +
            "maxProducts / maxEndUsers (end users named for the first time by an interaction included) are " +
            "record errors too. At most 1000 records of each kind and " +
            "10 MB per request (413 beyond). A job survives a restart of the service.",
        },
      },
    )
    .get("/batch", ({ tenant, query }) => listBatchJobs({ ctx: tenant, deps, input: query }), {
      auth: { mode: "keyOrJwt" },
      query: BatchListQuery,
      response: { 200: t.Array(BatchJobStatus) },
      detail: { tags, summary: "List batch jobs", description: "Newest first; optional status filter." },
    })
    .get(
      "/batch/:job_id",
      async ({ tenant, params, set }) => {
        const job = await getBatchJob({ ctx: tenant, deps, input: { jobId: params.job_id } });
        if (job.status === "completed_with_errors") set.status = 207;
        return job;
      },
      {
        auth: { mode: "keyOrJwt" },
        params: BatchPath,
        response: { 200: BatchJobStatus, 207: BatchJobStatus },
        detail: {
          tags,
          summary: "Status of a batch job",
          description:
            "Processed counts, record errors and an estimated completion time. Answers 207 when the job " +
            "finished with record errors (`completed_with_errors`), 200 otherwise.",
        },
      },
    );
}

/** Options only a test harness sets (test/jobs/slow-ingestion-service.ts); the service runs without any. */
export interface IngestionModuleOptions {
  /** Held inside each chunk's transaction, so a crash test's kill lands mid-job. */
  readonly chunkDelayMs?: number;
}

export function createIngestionModule(options: IngestionModuleOptions = {}): ServiceModule {
  return {
    name: "ingestion",
    routes: ingestionRoutes,
    jobKinds: (deps) => [
      ingestionJobKind({
        database: deps.database,
        config: deps.config,
        ...(options.chunkDelayMs === undefined ? {} : { chunkDelayMs: options.chunkDelayMs }),
        capacity: (tx, accountId, kind) => remainingCatalogueCapacity(deps, tx, accountId, kind),
        onApplied: (accountId, records) => deps.usageMeter.record(accountId, { ingestedRecords: records }),
        events: deps.events,
      }),
    ],
  };
}

export const ingestionModule = createIngestionModule();
