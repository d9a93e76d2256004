import type { TObject } from "@sinclair/typebox";
import { t } from "elysia";
import { DOCUMENTED_AS, UNKNOWN_QUERY_IGNORED } from "../../http/schema-types";
import { EndUserCreate } from "../end-users/schemas";
import { InteractionCreate } from "../interactions/schemas";
import { ProductCreate } from "../products/schemas";

export const MAX_RECORDS_PER_KIND = 1000;

/**
 * The envelope only checks sizes and that every record is an object: records are validated one by one
 * while the job runs, so one bad record is reported in `errors` instead of rejecting the whole batch.
 */
const records = (what: string, shape: TObject) =>
  t.Optional(
    // The OpenAPI description shows each record's real shape (see DOCUMENTED_AS).
    t.Array(t.Record(t.String(), t.Unknown(), { [DOCUMENTED_AS]: shape }), {
      maxItems: MAX_RECORDS_PER_KIND,
      description: `At most ${MAX_RECORDS_PER_KIND} ${what}.`,
    }),
  );

export const BatchRequest = t.Object(
  {
    products: records(
      "products, each as the body of POST /api/v1/products/ ({externalId, name, price, category, description?, " +
        "brand?, inStock?, attributes?}); upserted by externalId (a soft-deleted product is revived)",
      ProductCreate,
    ),
    users: records(
      "end users, each as the body of POST /api/v1/end-users/ ({externalId, preferredCategories?, " +
        "priceRangeMin?, priceRangeMax?, attributes?}); upserted by externalId",
      EndUserCreate,
    ),
    interactions: records(
      "interactions, each as the body of POST /api/v1/interactions/ ({external_user_id, external_product_id, " +
        "interaction_type, value? (> 0, default 1), timestamp?, query?, recommendation_id? (the answer a CLICK, " +
        "CART or PURCHASE is credited to)}); they may name products of the same " +
        "batch; unknown end users are created",
      InteractionCreate,
    ),
  },
  { additionalProperties: false, description: "Whole request at most 10 MB." },
);
export type BatchRequest = typeof BatchRequest.static;

export const BatchAccepted = t.Object({
  message: t.String(),
  status: t.Literal("processing"),
  jobId: t.Integer(),
  taskId: t.String(),
  totalUsers: t.Integer(),
  totalProducts: t.Integer(),
  totalInteractions: t.Integer(),
});

export const RecordError = t.Object({
  recordType: t.String({ description: "product, user or interaction" }),
  externalId: t.String({ description: 'For an interaction: "{external_user_id}:{external_product_id}".' }),
  index: t.Optional(
    t.Integer({
      minimum: 0,
      description: "The record's position in its array (products, users or interactions).",
    }),
  ),
  errorMessage: t.String(),
});

export const BATCH_STATUSES = ["processing", "completed", "completed_with_errors", "failed"] as const;

export const BatchJobStatus = t.Object({
  jobId: t.Integer(),
  taskId: t.String(),
  status: t.String({ description: BATCH_STATUSES.join(" | ") }),
  totalUsers: t.Integer(),
  totalProducts: t.Integer(),
  totalInteractions: t.Integer(),
  processedUsers: t.Integer(),
  processedProducts: t.Integer(),
  processedInteractions: t.Integer(),
  errors: t.Array(RecordError),
  failureReason: t.Union([t.String(), t.Null()], { description: "Why a failed job failed." }),
  createdAt: t.String({ format: "date-time" }),
  startedAt: t.Union([t.String({ format: "date-time" }), t.Null()]),
  finishedAt: t.Union([t.String({ format: "date-time" }), t.Null()]),
  estimatedCompletionAt: t.Union([t.String({ format: "date-time" }), t.Null()], {
    description: "While processing: projected from the rate so far; once finished: finishedAt.",
  }),
});
export type BatchJobStatus = typeof BatchJobStatus.static;

export const BatchListQuery = t.Object(
  {
    limit: t.Optional(
      t.Integer({ minimum: 1, maximum: 100, default: 20, description: "1..100, default 20." }),
    ),
    status: t.Optional(t.String({ maxLength: 50, description: BATCH_STATUSES.join(" | ") })),
  },
  UNKNOWN_QUERY_IGNORED,
);

export const BatchPath = t.Object({ job_id: t.Integer({ minimum: 1 }) });
