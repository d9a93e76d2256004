/**
 * `context.time_of_day` as one of the model's dayparts (by UTC hour: night 0–6, morning 6–12, afternoon
 * 12–18, evening 18–24, the clock of the stored interaction timestamps). Accepted: a daypart name, an hour
 * "0"–"23" or "HH:MM" (UTC), or an ISO 8601 date-time, whose offset is applied. Anything else is ignored:
 * the field is a hint for ranking, not a filter.
 */
import { DAYPARTS, daypartOfHour } from "../popularity";

const CLOCK = /^(\d{1,2})(?::([0-5]\d)(?::([0-5]\d))?)?$/;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}t\d{2}:\d{2}/;

/** The daypart index (0–3), or null when the value names none. */
export function daypartOf(value: string | undefined): number | null {
  if (value === undefined) return null;
  const text = value.trim().toLowerCase();
  const named = (DAYPARTS as readonly string[]).indexOf(text);
  if (named >= 0) return named;
  const clock = CLOCK.exec(text);
  if (clock !== null) {
    const hour = Number(clock[1]);
    return hour <= 23 ? daypartOfHour(hour) : null;
  }
  if (DATE_TIME.test(text)) {
    const at = Date.parse(value.trim());
    if (Number.isFinite(at)) return daypartOfHour(new Date(at).getUTCHours());
  }
  return null;
}
