import { t } from "elysia";
import { GroupMetrics } from "../analytics/schemas";
import { ModelVariant, RecommendationGoal, Strategy } from "../recommendations/schemas";
import { EXPERIMENT_ENDPOINTS } from "./endpoints";

export { ENDPOINT_OVERRIDES, EXPERIMENT_ENDPOINTS, type ExperimentEndpoint } from "./endpoints";

export const ArmOverrides = t.Object(
  {
    strategy: t.Optional(Strategy),
    recommendation_goal: t.Optional(RecommendationGoal),
    model_variant: t.Optional(ModelVariant),
    model_version: t.Optional(
      t.Integer({
        minimum: 1,
        maximum: 2147483647,
        description:
          "Serve this arm with a stored model of the account (its `version` in GET /api/v1/pipeline/models), " +
          "published or not, instead of the published one. It must exist and its artifact must still be " +
          "stored (422 otherwise); while the experiment runs it is kept.",
      }),
    ),
  },
  {
    additionalProperties: false,
    description:
      "What this arm changes. personalized/query: strategy, recommendation_goal, model_variant, model_version; " +
      "ecommerce/*: model_variant, model_version; products/similar and category: model_version. Another " +
      "override for the endpoint is a 422. Request parameters an arm sets replace what the request sends.",
  },
);
export type ArmOverrides = typeof ArmOverrides.static;

export const Arm = t.Object(
  {
    name: t.String({ minLength: 1, maxLength: 64, pattern: "^[A-Za-z0-9_.-]+$" }),
    traffic: t.Number({
      exclusiveMinimum: 0,
      maximum: 1,
      description: "Share of end users assigned to this arm; the shares of all arms sum to 1.",
    }),
    overrides: t.Optional(ArmOverrides),
  },
  { additionalProperties: false },
);
export type Arm = typeof Arm.static;

export const ExperimentCreate = t.Object(
  {
    name: t.String({ minLength: 1, maxLength: 200 }),
    endpoint: t.Union(
      EXPERIMENT_ENDPOINTS.map((e) => t.Literal(e)),
      {
        description:
          "The endpoint whose answers the experiment varies: personalized/query, ecommerce/homepage, " +
          "ecommerce/product-page, ecommerce/cart, ecommerce/checkout, products/similar or category.",
      },
    ),
    variants: t.Array(Arm, {
      minItems: 2,
      maxItems: 10,
      description: "The arms, the first one the control; names unique, traffic shares summing to 1.",
    }),
    minimum_effect: t.Optional(
      t.Number({
        exclusiveMinimum: 0,
        maximum: 10,
        default: 0.1,
        description:
          "Smallest relative difference worth finding (0.1 = ±10% of the control's rate); sets the sequential " +
          "test's sensitivity and when it says no difference is detectable.",
      }),
    ),
  },
  { additionalProperties: false },
);
export type ExperimentCreate = typeof ExperimentCreate.static;

export const Experiment = t.Object({
  id: t.Integer(),
  name: t.String(),
  endpoint: t.String(),
  status: t.Union([t.Literal("running"), t.Literal("stopped")]),
  variants: t.Array(Arm),
  minimumEffect: t.Number(),
  createdAt: t.String({ format: "date-time" }),
  stoppedAt: t.Union([t.String({ format: "date-time" }), t.Null()]),
});
export type Experiment = typeof Experiment.static;

export const ExperimentList = t.Object({ items: t.Array(Experiment) });

export const ExperimentParams = t.Object({
  experiment_id: t.Numeric({ minimum: 1, maximum: 2147483647, multipleOf: 1 }),
});

export const RESULT_METRICS = ["ctr", "add_to_cart", "conversion", "revenue"] as const;
export type ResultMetric = (typeof RESULT_METRICS)[number];

export const ResultsQuery = t.Object(
  {
    metric: t.Optional(
      t.Union(
        RESULT_METRICS.map((m) => t.Literal(m)),
        { default: "ctr", description: "The metric the arms are compared on (per impression)." },
      ),
    ),
  },
  { additionalProperties: false },
);

const Range = t.Object({ low: t.Union([t.Number(), t.Null()]), high: t.Union([t.Number(), t.Null()]) });

export const Decision = t.Union([
  t.Literal("keep_running"),
  t.Literal("treatment_better"),
  t.Literal("control_better"),
  t.Literal("no_difference"),
]);

export const ArmComparison = t.Object({
  variant: t.String(),
  against: t.String({ description: "The control arm." }),
  difference: t.Number({ description: "This arm's metric minus the control's (per impression)." }),
  relativeDifference: t.Union([t.Number(), t.Null()]),
  interval: t.Object(
    { low: t.Number(), high: t.Number() },
    { description: "Fixed-horizon 95% interval of the difference (valid for one planned look only)." },
  ),
  confidenceSequence: t.Composite([Range], {
    description:
      "Always-valid confidence sequence of the difference (null ends: too few impressions yet); valid however " +
      "often the results are looked at.",
  }),
  decision: Decision,
  verdict: t.String({ description: '"keep running", "<arm> is better" or "no difference detectable".' }),
  impressionsNeeded: t.Integer({
    description: "Impressions per arm still needed (80% power); 0 once decided.",
  }),
});

export const ExperimentResults = t.Object({
  experiment: Experiment,
  metric: t.String(),
  alpha: t.Number({
    description: "False-positive rate of the test over all looks (0.05, split over the arms).",
  }),
  arms: t.Array(t.Composite([t.Object({ variant: t.String(), traffic: t.Number() }), GroupMetrics])),
  comparisons: t.Array(ArmComparison),
  verdict: t.String({ description: '"keep running", "<arm> is better" or "no difference detectable".' }),
  impressionsNeeded: t.Integer(),
});
export type ExperimentResults = typeof ExperimentResults.static;
