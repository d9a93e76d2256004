import { t } from "elysia";
import { UNKNOWN_QUERY_IGNORED } from "../../http/schema-types";

export const TrainingRequest = t.Object(
  {
    algorithm: t.Optional(
      t.Union([t.Literal("auto"), t.Literal("als"), t.Literal("ease")], {
        description:
          '"auto" (default) fits the candidates that suit the catalogue size and keeps the best on the hold-out; ' +
          '"als" or "ease" force one model family.',
      }),
    ),
    factors: t.Optional(t.Integer({ minimum: 4, maximum: 256, description: "ALS latent factors (k)." })),
    iterations: t.Optional(t.Integer({ minimum: 1, maximum: 50, description: "ALS sweeps." })),
    regularization: t.Optional(
      t.Number({
        exclusiveMinimum: 0,
        maximum: 10000,
        description:
          'L2 penalty: the ALS λ (typical 0.01–1), or the EASE λ (typical 50–1000) with algorithm "ease". ' +
          "Setting it turns off the automatic hyper-parameter search.",
      }),
    ),
    halfLifeDays: t.Optional(
      t.Number({
        minimum: 0,
        maximum: 3650,
        description: "Recency half-life for interaction weights in days; 0 disables decay.",
      }),
    ),
  },
  { additionalProperties: false, description: "Optional training options; unknown fields are rejected." },
);
export type TrainingRequestType = typeof TrainingRequest.static;

export const TrainingAccepted = t.Object({
  jobId: t.Integer(),
  taskId: t.String(),
  status: t.Literal("queued"),
  message: t.String(),
});
export type TrainingAcceptedType = typeof TrainingAccepted.static;

const nullableNumber = t.Union([t.Number(), t.Null()]);

export const ModelMetrics = t.Object({
  ndcgAt10: nullableNumber,
  recallAt20: nullableNumber,
  coverageAt10: nullableNumber,
  popularityNdcgAt10: nullableNumber,
  evaluatedUsers: t.Integer({ description: "Users in the hold-out (users with at least 5 interactions)." }),
  note: t.Union([t.String(), t.Null()], {
    description: 'Why figures are null, e.g. "insufficient data" on a tenant too small to evaluate.',
  }),
});
export type ModelMetricsType = typeof ModelMetrics.static;

export const PublicationDecision = t.Object({
  published: t.Boolean(),
  reason: t.String(),
  comparedOn: t.Union([t.Literal("first-model"), t.Literal("same-holdout"), t.Literal("stored-metrics")], {
    description:
      "\"same-holdout\": the published model's configuration (its recorded params) was fit on the new run's " +
      "training split and measured on the same hold-out as the new model (per-user 20% hold-out, seed 42, " +
      "full ranking), so both NDCG@10 figures come from one protocol on one data set; the published " +
      "artifact itself is not re-scored, as it was trained on most of those held-out events. " +
      '"stored-metrics" (fallback): the published model\'s params could not be reproduced, so its stored ' +
      'figure from its own hold-out was used; the reason says why. "first-model": nothing to compare with.',
  }),
  publishedEvaluation: t.Union(
    [
      t.Literal("refit-on-same-split"),
      t.Literal("identical-configuration"),
      t.Literal("stored-metrics"),
      t.Null(),
    ],
    {
      description:
        'How publishedNdcgAt10 was obtained: "refit-on-same-split" (an extra fit of the published ' +
        'configuration), "identical-configuration" (the new run chose the same configuration, so the figure ' +
        'is the new model\'s own, equal by construction, and no extra fit ran), "stored-metrics" (fallback), ' +
        "or null for a first model.",
    },
  ),
  newNdcgAt10: nullableNumber,
  publishedNdcgAt10: nullableNumber,
  previousModelId: t.Union([t.Integer(), t.Null()]),
});

export const TrainingJobMetrics = t.Object({
  ...ModelMetrics.properties,
  decision: t.Union([PublicationDecision, t.Null()]),
});
export type TrainingJobMetricsType = typeof TrainingJobMetrics.static;

export const TrainingJobStatus = t.Object({
  jobId: t.Integer(),
  taskId: t.String(),
  status: t.Union([t.Literal("queued"), t.Literal("running"), t.Literal("completed"), t.Literal("failed")]),
  progress: t.Integer({ minimum: 0, maximum: 100 }),
  stage: t.String({ description: "queued, loading, training stages reported by the engine, storing, done." }),
  createdAt: t.String({ format: "date-time" }),
  startedAt: t.Union([t.String({ format: "date-time" }), t.Null()]),
  finishedAt: t.Union([t.String({ format: "date-time" }), t.Null()]),
  error: t.Union([t.String(), t.Null()]),
  modelId: t.Union([t.Integer(), t.Null()]),
  metrics: t.Union([TrainingJobMetrics, t.Null()]),
});
export type TrainingJobStatusType = typeof TrainingJobStatus.static;

export const ModelMetadata = t.Object({
  modelId: t.Integer(),
  version: t.Integer(),
  createdAt: t.String({ format: "date-time" }),
  algorithm: t.String(),
  params: t.Record(t.String(), t.Unknown()),
  trainingSeconds: t.Number(),
  counts: t.Object({ users: t.Integer(), items: t.Integer(), interactions: t.Integer() }),
  metrics: ModelMetrics,
  isPublished: t.Boolean(),
});
export type ModelMetadataType = typeof ModelMetadata.static;

export const PipelineStatus = t.Composite([
  ModelMetadata,
  t.Object({
    published: t.Boolean({
      description:
        "Whether this model serves now (false: it did not beat the serving model and was kept back)",
    }),
  }),
]);
export type PipelineStatusType = typeof PipelineStatus.static;

export const JobIdParams = t.Object({ job_id: t.Integer({ minimum: 1 }) });

export const ModelListQuery = t.Object(
  {
    limit: t.Optional(t.Integer({ minimum: 1, maximum: 1000, default: 10 })),
    offset: t.Optional(t.Integer({ minimum: 0, default: 0 })),
  },
  UNKNOWN_QUERY_IGNORED,
);

export const JobListQuery = t.Object(
  {
    limit: t.Optional(t.Integer({ minimum: 1, maximum: 100, default: 20 })),
    status: t.Optional(
      t.String({ description: "Any string; known states: queued, running, completed, failed." }),
    ),
  },
  UNKNOWN_QUERY_IGNORED,
);
