import { t } from "elysia";

const ErrorBody = t.Object(
  { message: t.String(), errorCode: t.String(), requestId: t.String() },
  { description: "The service's error shape." },
);

export const MetricsResponses = {
  200: t.String({
    description: "Prometheus text exposition format 0.0.4 (`text/plain; version=0.0.4`).",
  }),
  401: ErrorBody,
  403: ErrorBody,
};

const Check = t.Object({
  state: t.Union([t.Literal("ok"), t.Literal("failing"), t.Literal("not_configured")]),
  detail: t.String(),
});

export const ReadyResponse = t.Object(
  {
    status: t.Union([t.Literal("ready"), t.Literal("not_ready")]),
    checks: t.Record(t.String(), Check),
  },
  {
    description:
      "Readiness: 200 with status `ready` when every check is `ok` or `not_configured`, otherwise 503 " +
      "with status `not_ready`. Checks: `database` (the background probe answered recently), `shutdown` " +
      "(failing once SIGTERM arrived), `snapshots` (tenant snapshots loaded; `not_configured` until the " +
      "snapshot registry registers itself).",
  },
);

export const ReadyResponses = { 200: ReadyResponse, 503: ReadyResponse };
