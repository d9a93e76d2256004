import { t } from "elysia";

const Counts = {
  products: t.Integer({ minimum: 0 }),
  endUsers: t.Integer({ minimum: 0 }),
  interactions: t.Integer({ minimum: 0 }),
  models: t.Integer({ minimum: 0 }),
  jobs: t.Integer({ minimum: 0, description: "Ingestion and training jobs" }),
};

export const SandboxStatus = t.Object(
  {
    plan: t.String(),
    sandbox: t.Boolean({ description: "True on the FREE plan, whose data may be reset" }),
    counts: t.Object(Counts),
  },
  { description: "The account's data counts; products exclude soft-deleted ones" },
);

export const ResetResult = t.Object(
  { deleted: t.Object(Counts), resetAt: t.String({ format: "date-time" }) },
  {
    description:
      "What the reset deleted (end users take their searches, orders and recommendation logs along)",
  },
);

export const QuickStartResult = t.Object(
  {
    products: t.Integer({ description: "Demo products created" }),
    endUsers: t.Integer({ description: "Demo end users created" }),
    interactions: t.Integer({ description: "Demo interactions created" }),
    jobId: t.Union([t.Integer(), t.Null()], {
      description:
        "The training job started on the demo data; null when today's training allowance is used up",
    }),
    sampleEndUsers: t.Array(t.String(), {
      description:
        "External ids of a few demo end users with the richest histories, for a first " +
        "`POST /api/v1/recommendations/personalized/query` (`external_user_id`)",
    }),
    sampleProducts: t.Array(t.String(), {
      description:
        "External ids of a few of the most interacted-with demo products, for a first similar-products " +
        "call or a product-page recommendation",
    }),
  },
  { description: "The demo catalogue loaded and the training job started on it" },
);

export type SandboxStatusType = typeof SandboxStatus.static;
export type ResetResultType = typeof ResetResult.static;
export type QuickStartResultType = typeof QuickStartResult.static;
