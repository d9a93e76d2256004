import { t } from "elysia";

export const PlanLimits = t.Object(
  {
    requestsPerMinute: t.Integer({
      minimum: 1,
      description:
        "API requests per minute: a key's, and a signed-in user's to the recommendation, interaction and " +
        "ingestion routes. Publishable keys' requests have a window of their own of this size, and a " +
        "signed-in user's other requests one of at least 300.",
    }),
    monthlyRequests: t.Integer({
      minimum: 1,
      description:
        "API requests per calendar month (UTC), counted as for requestsPerMinute; account routes " +
        "(accounts, usage, plans, billing, api-keys, system-users, auth) are not counted and stay open past it.",
    }),
    maxProducts: t.Integer({
      minimum: 0,
      description: "Products in the catalogue (soft-deleted ones excluded)",
    }),
    maxEndUsers: t.Integer({ minimum: 0, description: "End users" }),
    trainingsPerDay: t.Integer({ minimum: 0, description: "Training runs per UTC day" }),
    bulkPerMinute: t.Optional(
      t.Integer({ minimum: 1, description: "Bulk ingestion requests per minute (default 10)" }),
    ),
    bulkPerHour: t.Optional(
      t.Integer({ minimum: 1, description: "Bulk ingestion requests per hour (default 100)" }),
    ),
    bulkPerDay: t.Optional(
      t.Integer({ minimum: 1, description: "Bulk ingestion requests per day (default 1000)" }),
    ),
  },
  { additionalProperties: false },
);

export const Plan = t.Object(
  {
    name: t.String({ minLength: 1, maxLength: 50 }),
    priceMonthly: t.Number({ minimum: 0, description: "Price per month; 0 means no subscription is needed" }),
    currency: t.String({ minLength: 3, maxLength: 3, description: "ISO 4217 code, e.g. USD" }),
    limits: PlanLimits,
    features: t.Array(t.String()),
  },
  { additionalProperties: false },
);

/** The shape of PLANS_FILE and of `GET /plans/`: plan name → plan. */
export const PlanTable = t.Record(t.String({ pattern: "^[A-Z][A-Z0-9_]*$" }), Plan, {
  description: "Plans keyed by name",
});

export type PlanType = typeof Plan.static;
export type PlanLimitsType = typeof PlanLimits.static;
export type PlanTableType = typeof PlanTable.static;
