import { Elysia } from "elysia";
import type { AppDeps } from "../../app-deps";
import { authPlugin } from "../../http/auth";
import { ELYSIA_CONFIG } from "../../http/kernel";
import type { ServiceModule } from "../module";
import { createExperiment } from "./create";
import { getExperiment, listExperiments } from "./list";
import { getExperimentResults } from "./results";
import {
  Experiment,
  ExperimentCreate,
  ExperimentList,
  ExperimentParams,
  ExperimentResults,
  ResultsQuery,
} from "./schemas";
import { stopExperiment } from "./stop";

const tags = ["Experiments"];
const auth = { mode: "keyOrJwt" } as const;
const secretOnly = "Secret API key or user JWT; publishable keys answer 403.";

function experimentsRoutes(deps: AppDeps) {
  return new Elysia({ ...ELYSIA_CONFIG, name: "experiments", prefix: "/api/v1/experiments" })
    .use(authPlugin(deps))
    .post(
      "/",
      async ({ tenant, body, set }) => {
        set.status = 201;
        return createExperiment({ ctx: tenant, deps, input: body });
      },
      {
        auth,
        body: ExperimentCreate,
        response: { 201: Experiment },
        detail: {
          tags,
          summary: "Start an A/B experiment",
          description:
            "Splits the end users of an endpoint (personalized/query, an ecommerce preset, products/similar or " +
            "category) into arms by hashing (experiment id, external user id): a user keeps their arm on every " +
            "request and in every process. The listings name no end user: they are assigned when called with " +
            "`external_user_id`, and served as usual, outside the experiment, without it. Each arm's `overrides` " +
            "apply to its answers: the personalised query's strategy, recommendation_goal and model_variant, " +
            "the presets' model_variant, and on every endpoint a pinned `model_version` (a stored model of the " +
            "account, published or not, from GET /api/v1/pipeline/models) that ranks the arm's answers while " +
            "everyone else keeps the published model. An override that does not act on the endpoint, an " +
            "unknown version or one whose artifact is no longer stored is a 422 naming the arm. A personalised " +
            "request that sends `model_variant` itself is served as asked, outside the experiment. Answers " +
            "name their arm and the model version that ranked them in `experiment: {id, variant, " +
            "modelVersion}`. One running experiment per endpoint (409 otherwise). Takes effect in this process " +
            "at once, in others within 5 seconds. " +
            secretOnly,
        },
      },
    )
    .get("/", ({ tenant }) => listExperiments({ ctx: tenant, deps }), {
      auth,
      response: { 200: ExperimentList },
      detail: { tags, summary: "List experiments", description: `Newest first. ${secretOnly}` },
    })
    .get(
      "/:experiment_id",
      ({ tenant, params }) => getExperiment({ ctx: tenant, deps, input: { id: params.experiment_id } }),
      {
        auth,
        params: ExperimentParams,
        response: { 200: Experiment },
        detail: { tags, summary: "Get an experiment", description: secretOnly },
      },
    )
    .post(
      "/:experiment_id/stop",
      ({ tenant, params }) => stopExperiment({ ctx: tenant, deps, input: { id: params.experiment_id } }),
      {
        auth,
        params: ExperimentParams,
        response: { 200: Experiment },
        detail: {
          tags,
          summary: "Stop an experiment",
          description: `Every end user gets the endpoint's usual answers again; the results stay readable. ${secretOnly}`,
        },
      },
    )
    .get(
      "/:experiment_id/results",
      ({ tenant, params, query }) =>
        getExperimentResults({
          ctx: tenant,
          deps,
          input: { id: params.experiment_id, metric: query.metric },
        }),
      {
        auth,
        params: ExperimentParams,
        query: ResultsQuery,
        response: { 200: ExperimentResults },
        detail: {
          tags,
          summary: "Results of an experiment",
          description:
            "Per arm: impressions, rates and revenue per 1,000 impressions with 95% intervals (as the analytics " +
            "report). Per arm against the control (the first arm) on `metric` (ctr default, add_to_cart, " +
            "conversion, revenue): the difference with a fixed-horizon 95% interval, and an always-valid " +
            "sequential test (mixture SPRT, normal mixture; α = 0.05 split over the arms) that may be read as " +
            'often as you like: verdict "keep running", "<arm> is better" or "no difference detectable" (its ' +
            "confidence sequence lies within ±minimum_effect of the control), with the impressions per arm " +
            "still needed at 80% power. " +
            secretOnly,
        },
      },
    );
}

export const experimentsModule: ServiceModule = {
  name: "experiments",
  routes: experimentsRoutes,
};
