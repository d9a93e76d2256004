import { t } from "elysia";

const DAY = "^\\d{4}-\\d{2}-\\d{2}$";

export const GROUPINGS = ["endpoint", "strategy", "variant", "day"] as const;
export type Grouping = (typeof GROUPINGS)[number];

export const MetricsQuery = t.Object(
  {
    from: t.Optional(
      t.String({
        pattern: DAY,
        description: "First UTC day (YYYY-MM-DD) included; default 29 days before `to`.",
      }),
    ),
    to: t.Optional(t.String({ pattern: DAY, description: "Last UTC day included; default today." })),
    group_by: t.Optional(
      t.Union(
        GROUPINGS.map((g) => t.Literal(g)),
        {
          default: "endpoint",
          description:
            "endpoint (default), strategy (the personalised query's; `none` for other endpoints), variant (the " +
            "model_variant that served: the personalised query's, or a preset's when an experiment arm sets " +
            "it; `none` otherwise) or day.",
        },
      ),
    ),
  },
  { additionalProperties: false },
);
export type MetricsQuery = typeof MetricsQuery.static;

export const Estimate = t.Object(
  {
    value: t.Number(),
    low: t.Number({ description: "Lower end of the 95% confidence interval." }),
    high: t.Number({ description: "Upper end of the 95% confidence interval." }),
  },
  { description: "A point estimate with its 95% confidence interval." },
);
export type Estimate = typeof Estimate.static;

export const GroupMetrics = t.Object({
  impressions: t.Integer({ description: "Products shown (each item of each answer)." }),
  clicks: t.Integer(),
  addToCarts: t.Integer(),
  purchases: t.Integer(),
  revenue: t.Number({ description: "Credited revenue: PURCHASE values, or the product's price when none." }),
  clickThroughRate: Estimate,
  addToCartRate: Estimate,
  conversionRate: Estimate,
  revenuePerThousandImpressions: Estimate,
});
export type GroupMetrics = typeof GroupMetrics.static;

export const MetricsGroup = t.Composite([t.Object({ group: t.String() }), GroupMetrics]);
export type MetricsGroup = typeof MetricsGroup.static;

export const MetricsReport = t.Object({
  from: t.String(),
  to: t.String(),
  groupBy: t.String(),
  groups: t.Array(MetricsGroup),
});
export type MetricsReport = typeof MetricsReport.static;
