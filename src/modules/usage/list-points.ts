import type { TenantContext } from "../../http/tenant";
import { validationError } from "../../shared/errors";
import { addDays, readUsageDays } from "./read-usage";
import type { UsagePointType, UsageQueryType } from "./schemas";
import type { ReportDeps } from "./usage-report";

/** A year of days is the most one request may ask for. */
export const MAX_RANGE_DAYS = 366;

export async function listUsagePoints({
  ctx,
  deps,
  input,
}: {
  ctx: TenantContext;
  deps: ReportDeps;
  input: UsageQueryType;
}): Promise<UsagePointType[]> {
  const today = new Date(deps.planEnforcer.now()).toISOString().slice(0, 10);
  const endDay = input.end_date === undefined ? today : dayOf(input.end_date, "end_date");
  const startDay =
    input.start_date === undefined ? addDays(endDay, -29) : dayOf(input.start_date, "start_date");
  if (startDay > endDay) {
    throw validationError([
      {
        loc: ["query", "start_date"],
        msg: "start_date must not be after end_date",
        type: "value_error.range",
      },
    ]);
  }
  const span = (Date.parse(endDay) - Date.parse(startDay)) / 86_400_000 + 1;
  if (span > MAX_RANGE_DAYS) {
    throw validationError([
      {
        loc: ["query", "start_date"],
        msg: `the range may cover at most ${MAX_RANGE_DAYS} days`,
        type: "value_error.range",
      },
    ]);
  }
  const days = await readUsageDays(deps, ctx.accountId, startDay, endDay);
  const points: UsagePointType[] = [];
  for (let day = startDay; day <= endDay; day = addDays(day, 1)) {
    const counts = days.get(day);
    points.push({
      date: day,
      requests: counts?.requests ?? 0,
      recommendations: counts?.recommendations ?? 0,
      ingestedRecords: counts?.ingestedRecords ?? 0,
      trainings: counts?.trainings ?? 0,
    });
  }
  return points;
}

function dayOf(text: string, field: string): string {
  const at = Date.parse(text);
  if (Number.isNaN(at)) {
    throw validationError([
      { loc: ["query", field], msg: "not an ISO 8601 date-time", type: "value_error.datetime" },
    ]);
  }
  // Year 0000 and -271821 parse too, and the store cannot hold them.
  if (at < 0) {
    throw validationError([
      { loc: ["query", field], msg: "must not be before 1970-01-01", type: "value_error.datetime" },
    ]);
  }
  return new Date(at).toISOString().slice(0, 10);
}
