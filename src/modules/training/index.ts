import { Elysia, t } from "elysia";
import type { AppDeps } from "../../app-deps";
import { authPlugin } from "../../http/auth";
import { ELYSIA_CONFIG } from "../../http/kernel";
import { trainingJobKind } from "../../training/job-kind";
import type { ServiceModule } from "../module";
import { enqueueTraining } from "./enqueue";
import { ErasureRetrainingSweep } from "./erasure-retraining";
import { getTrainingJob } from "./get-job";
import { getPipelineStatus } from "./get-status";
import { listTrainingJobs } from "./list-jobs";
import { listModels } from "./list-models";
import {
  JobIdParams,
  JobListQuery,
  ModelListQuery,
  ModelMetadata,
  PipelineStatus,
  TrainingAccepted,
  TrainingJobStatus,
  TrainingRequest,
} from "./schemas";

const tags = ["Training pipeline"];
const auth = { mode: "keyOrJwt" } as const;

function trainingRoutes(deps: AppDeps) {
  return new Elysia({ ...ELYSIA_CONFIG, name: "training", prefix: "/api/v1/pipeline" })
    .use(authPlugin(deps))
    .post(
      "/train",
      async ({ tenant, body, set }) => {
        const accepted = await enqueueTraining(deps, tenant, body ?? {});
        set.status = 202;
        return accepted;
      },
      {
        auth,
        body: t.Optional(TrainingRequest),
        response: { 202: TrainingAccepted },
        detail: {
          tags,
          summary: "Start a training job",
          description:
            "Queues a training run for the caller's account and answers 202 at once. The run loads the " +
            "account's products and interactions, fits the models in a background worker, evaluates them on " +
            "a per-user 20% hold-out (NDCG@10, Recall@20, coverage@10, popularity baseline) and publishes the " +
            "new model only if it is at least as good as the published one (an account's first model is " +
            "always published). Counts against the plan's trainings per day (429 TRAINING_TOO_FREQUENT with " +
            "Retry-After). The job survives restarts of the service.",
        },
      },
    )
    .get("/status", ({ tenant }) => getPipelineStatus({ ctx: tenant, deps }), {
      auth,
      response: { 200: PipelineStatus },
      detail: {
        tags,
        summary: "Metadata of the latest completed training's model",
        description:
          "The model of the latest completed training (not a running job): algorithm, parameters, counts, " +
          "hold-out metrics and `published` (false when it did not beat the serving model and was kept " +
          "back). 404 NO_MODEL before the first completed training.",
      },
    })
    .get(
      "/jobs/:job_id/status",
      ({ tenant, params }) => getTrainingJob({ ctx: tenant, deps, input: { jobId: params.job_id } }),
      {
        auth,
        params: JobIdParams,
        response: { 200: TrainingJobStatus },
        detail: {
          tags,
          summary: "Status of one training job",
          description:
            "State (queued → running → completed | failed), progress 0–100 and the current stage; when " +
            "finished, the model id, its hold-out metrics and the publication decision (both NDCG@10 " +
            "figures and how they were compared), or the failure reason.",
        },
      },
    )
    .get("/models", ({ tenant, query }) => listModels({ ctx: tenant, deps, input: query }), {
      auth,
      query: ModelListQuery,
      response: { 200: t.Array(ModelMetadata) },
      detail: {
        tags,
        summary: "List trained models",
        description: "The account's models, newest first, with isPublished marking the one that serves.",
      },
    })
    .get("/jobs", ({ tenant, query }) => listTrainingJobs({ ctx: tenant, deps, input: query }), {
      auth,
      query: JobListQuery,
      response: { 200: t.Array(TrainingJobStatus) },
      detail: {
        tags,
        summary: "List training jobs",
        description:
          "Newest first; `status` filters by state (queued, running, completed, failed). Besides the " +
          "trainings the account started, the list holds those the service starts itself after end users " +
          "with interactions were erased (so the served model stops reflecting them within 24 hours); those " +
          "do not count against the plan's trainings per day, and their publication decision or error says " +
          "why they ran.",
      },
    });
}

export const trainingModule: ServiceModule = {
  name: "training",
  routes: trainingRoutes,
  jobKinds: (deps) => [trainingJobKind({ ...deps, databaseUrl: deps.config.databaseUrl })],
  start: async (deps) => {
    const sweep = new ErasureRetrainingSweep(deps, deps.config.erasureRetraining);
    sweep.start();
    return () => sweep.stop();
  },
};
