import { Elysia } from "elysia";
import type { AppDeps } from "../../deps";
import { authPlugin } from "../../http/auth";
import { ELYSIA_CONFIG } from "../../http/kernel";
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

export function experimentsModule(deps: AppDeps) {
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
            "Splits the end users of an endpoint (now `personalized/query`) into arms by hashing (experiment id, " +
            "external user id): a user keeps their arm on every request and in every process. Each arm's " +
            "`overrides` (strategy, recommendation_goal, model_variant) replace those request parameters; a " +
            "request that sends `model_variant` itself is served as asked, outside the experiment. Answers name " +
            "their arm in `experiment: {id, variant}`. One running experiment per endpoint (409 otherwise). " +
            "Takes effect in this process at once, in others within 5 seconds. " +
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
