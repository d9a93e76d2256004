import { t } from "elysia";
import { UNKNOWN_QUERY_IGNORED } from "../../http/schema-types";
import { PlanLimits } from "../plans/schemas";

const Counts = {
  requests: t.Integer({ minimum: 0, description: "Authenticated API requests admitted" }),
  recommendations: t.Integer({ minimum: 0, description: "Recommendation responses served" }),
  ingestedRecords: t.Integer({ minimum: 0, description: "Products, end users and interactions ingested" }),
  trainings: t.Integer({ minimum: 0, description: "Training runs started" }),
};

export const UsagePoint = t.Object(
  { date: t.String({ format: "date", description: "UTC day" }), ...Counts },
  { description: "One UTC day of usage" },
);

export const UsagePoints = t.Array(UsagePoint, {
  description: "One point per day of the range, oldest first",
});

export const UsageQuery = t.Object(
  {
    start_date: t.Optional(
      t.String({
        format: "date-time",
        description:
          "First day of the range (ISO 8601 date-time, UTC day taken); default: 29 days before end_date",
      }),
    ),
    end_date: t.Optional(
      t.String({
        format: "date-time",
        description: "Last day of the range (ISO 8601 date-time); default: today",
      }),
    ),
  },
  UNKNOWN_QUERY_IGNORED,
);

export const EffectiveLimits = t.Object(
  {
    ...PlanLimits.properties,
    bulkPerMinute: t.Integer(),
    bulkPerHour: t.Integer(),
    bulkPerDay: t.Integer(),
  },
  { description: "Limits in force (FREE limits while a paid subscription is lapsed)" },
);

export const Remaining = t.Object({
  monthlyRequests: t.Integer({ minimum: 0 }),
  products: t.Integer({ minimum: 0 }),
  endUsers: t.Integer({ minimum: 0 }),
  trainingsToday: t.Integer({ minimum: 0 }),
});

export const Period = t.Object({
  start: t.String({ format: "date-time", description: "Start of the current calendar month (UTC)" }),
  end: t.String({ format: "date-time", description: "Start of the next calendar month (UTC), exclusive" }),
});

export const UsageStatistics = t.Object(
  {
    plan: t.String({ description: "The account's plan" }),
    subscriptionStatus: t.String({ description: "none | pending | active | lapsed" }),
    period: Period,
    ...Counts,
    limits: EffectiveLimits,
    remaining: Remaining,
  },
  { description: "This month's usage of the account against its plan's limits" },
);

export const UsageSummary = t.Object(
  {
    plan: t.String(),
    subscriptionStatus: t.String(),
    subscriptionRenewsAt: t.Union([t.String({ format: "date-time" }), t.Null()]),
    month: t.Object({ ...Period.properties, ...Counts }),
    today: UsagePoint,
    limits: EffectiveLimits,
    counts: t.Object({ products: t.Integer({ minimum: 0 }), endUsers: t.Integer({ minimum: 0 }) }),
    remaining: Remaining,
  },
  { description: "Consolidated usage for the dashboard: this month, today, limits and catalogue size" },
);

export type UsagePointType = typeof UsagePoint.static;
export type UsageStatisticsType = typeof UsageStatistics.static;
export type UsageSummaryType = typeof UsageSummary.static;
export type UsageQueryType = typeof UsageQuery.static;
