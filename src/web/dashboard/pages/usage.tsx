import { useMemo, useState } from "preact/hooks";
import { Link } from "wouter-preact";
import { api, type PlanTable, type UsagePoint, type UsageSummary } from "../api";
import { useSession } from "../session";
import { Confirm, ErrorNote, LineChart, Loading, useAction, useAsync } from "../ui";

const DAYS = 30;

export function UsagePage() {
  const { account } = useSession();
  const data = useAsync(async () => {
    const end = new Date();
    const start = new Date(end.getTime() - (DAYS - 1) * 86_400_000);
    const [summary, points, plans] = await Promise.all([
      api.usageSummary(),
      api.usagePoints(start.toISOString(), end.toISOString()),
      api.plans(),
    ]);
    return { summary, points, plans };
  }, []);
  return (
    <>
      <h1 tabIndex={-1}>Usage and plan</h1>
      <ErrorNote error={data.error} />
      {data.data === undefined ? (
        data.error === undefined && <Loading what="usage" />
      ) : (
        <>
          <UsageCharts summary={data.data.summary} points={data.data.points} />
          <Plans plans={data.data.plans} current={account.plan} />
        </>
      )}
      {account.plan === "FREE" && <Sandbox />}
    </>
  );
}

function UsageCharts({ summary, points }: { summary: UsageSummary; points: UsagePoint[] }) {
  const x = useMemo(() => points.map((point) => Date.parse(point.date) / 1000), [points]);
  const monthStart = Date.parse(summary.month.start) / 1000;
  const requests = useMemo(() => {
    let running = 0;
    const cumulative = points.map((point, at) => {
      // The month's running total restarts on its first day, like the plan's monthly allowance.
      if ((x[at] ?? 0) < monthStart) return null;
      running += point.requests;
      return running;
    });
    return [
      { label: "Requests per day", values: points.map((p) => p.requests), color: "--series-1" },
      { label: "Requests this month", values: cumulative, color: "--series-3" },
      {
        label: "Monthly allowance",
        values: points.map(() => summary.limits.monthlyRequests),
        color: "--series-2",
        dash: [6, 4],
      },
    ];
  }, [points, x, monthStart, summary.limits.monthlyRequests]);
  const work = useMemo(
    () => [
      { label: "Recommendations", values: points.map((p) => p.recommendations), color: "--series-1" },
      { label: "Records ingested", values: points.map((p) => p.ingestedRecords), color: "--series-3" },
    ],
    [points],
  );
  const trainings = useMemo(
    () => [
      { label: "Trainings", values: points.map((p) => p.trainings), color: "--series-1" },
      {
        label: "Trainings allowed per day",
        values: points.map(() => summary.limits.trainingsPerDay),
        color: "--series-2",
        dash: [6, 4],
      },
    ],
    [points, summary.limits.trainingsPerDay],
  );
  const { limits, month, counts } = summary;
  return (
    <section class="card" aria-labelledby="usage-title">
      <h2 id="usage-title">This month</h2>
      <div class="grid">
        <Gauge label="Requests" used={month.requests} limit={limits.monthlyRequests} />
        <Gauge label="Products" used={counts.products} limit={limits.maxProducts} />
        <Gauge label="End users" used={counts.endUsers} limit={limits.maxEndUsers} />
        <Gauge label="Trainings today" used={summary.today.trainings} limit={limits.trainingsPerDay} />
      </div>
      <p class="muted">
        Plan {summary.plan} ({summary.subscriptionStatus}); up to {limits.requestsPerMinute} requests per
        minute.
        {summary.subscriptionRenewsAt !== null &&
          ` Renews ${new Date(summary.subscriptionRenewsAt).toLocaleDateString()}.`}
      </p>
      <h2>Last {DAYS} days</h2>
      <div class="grid">
        <LineChart
          caption="API requests against the monthly allowance"
          x={x}
          xLabel="Day"
          series={requests}
          time
        />
        <LineChart
          caption="Recommendations served and records ingested per day"
          x={x}
          xLabel="Day"
          series={work}
          time
        />
        <LineChart
          caption="Trainings per day against the daily allowance"
          x={x}
          xLabel="Day"
          series={trainings}
          time
        />
      </div>
    </section>
  );
}

function Gauge({ label, used, limit }: { label: string; used: number; limit: number }) {
  return (
    <label>
      {label}: {used.toLocaleString()} of {limit.toLocaleString()}
      <progress max={Math.max(limit, 1)} value={Math.min(used, limit)} />
    </label>
  );
}

function Plans({ plans, current }: { plans: PlanTable; current: string }) {
  const [apiKey, setApiKey] = useState("");
  const returnUrl = `${location.origin}/dashboard/usage`;
  const go = (url: string) => window.location.assign(url);
  const checkout = useAction(async (plan: string) =>
    go((await api.checkout(plan, apiKey, returnUrl)).checkoutUrl),
  );
  const subscribe = useAction(async (plan: string) =>
    go((await api.subscribe(plan, apiKey, returnUrl)).checkoutUrl),
  );
  const portal = useAction(async () => go((await api.portal(apiKey, returnUrl)).url));
  const busy = checkout.busy || subscribe.busy || portal.busy;
  const ordered = Object.values(plans).sort((a, b) => a.priceMonthly - b.priceMonthly);
  return (
    <section class="card" aria-labelledby="plans-title">
      <h2 id="plans-title">Plans</h2>
      <p>
        Billing asks for one of your secret API keys as well as your session. Paste one here (it is not
        stored); <Link href="/keys">create one</Link> if you no longer have it.
      </p>
      <label>
        Secret API key for billing
        <input
          type="password"
          autoComplete="off"
          value={apiKey}
          onInput={(e) => setApiKey(e.currentTarget.value)}
          placeholder="sk_live_…"
        />
      </label>
      <ErrorNote error={checkout.error ?? subscribe.error ?? portal.error} />
      <div class="plans">
        {ordered.map((plan) => (
          <article
            key={plan.name}
            class={`card${plan.name === current ? " current" : ""}`}
            aria-label={`Plan ${plan.name}`}
          >
            <h3>
              {plan.name} {plan.name === current && <span class="badge ok">your plan</span>}
            </h3>
            <p class="stat">
              {plan.priceMonthly === 0 ? "Free" : `${plan.priceMonthly} ${plan.currency}`}
              {plan.priceMonthly > 0 && <span class="muted"> / month</span>}
            </p>
            <ul>
              <li>{plan.limits.monthlyRequests.toLocaleString()} requests a month</li>
              <li>{plan.limits.requestsPerMinute.toLocaleString()} requests a minute</li>
              <li>{plan.limits.maxProducts.toLocaleString()} products</li>
              <li>{plan.limits.maxEndUsers.toLocaleString()} end users</li>
              <li>{plan.limits.trainingsPerDay} trainings a day</li>
              {plan.features.map((feature) => (
                <li key={feature}>{feature}</li>
              ))}
            </ul>
            {plan.name !== current && plan.priceMonthly > 0 && (
              <p class="row">
                <button
                  type="button"
                  disabled={busy || apiKey === ""}
                  onClick={() => void subscribe.run(plan.name)}
                >
                  Subscribe to {plan.name}
                </button>
                <button
                  type="button"
                  class="secondary"
                  disabled={busy || apiKey === ""}
                  onClick={() => void checkout.run(plan.name)}
                >
                  Checkout
                </button>
              </p>
            )}
          </article>
        ))}
      </div>
      <p>
        To move to a cheaper paid plan, subscribe to it above. To leave paid plans, cancel the subscription in
        the payment provider's portal: the account moves to FREE with FREE's limits, and its data stays.
      </p>
      <p>
        <button
          type="button"
          class="secondary"
          disabled={busy || apiKey === ""}
          onClick={() => void portal.run()}
        >
          Manage or cancel the subscription
        </button>
      </p>
    </section>
  );
}

function Sandbox() {
  const status = useAsync(() => api.sandboxStatus(), []);
  const [message, setMessage] = useState<string | null>(null);
  const [sampleUser, setSampleUser] = useState<string | null>(null);
  const [confirming, setConfirming] = useState(false);
  const after = status.reload;
  const quickStart = useAction(async () => {
    const result = await api.quickStart();
    setSampleUser(result.sampleEndUsers[0] ?? null);
    setMessage(
      `Loaded ${result.products.toLocaleString()} products, ${result.endUsers.toLocaleString()} end users and ` +
        `${result.interactions.toLocaleString()} interactions. ` +
        (result.jobId === null
          ? "No training was started: today's allowance is used."
          : `Training job ${result.jobId} started.`),
    );
    after();
  });
  const reset = useAction(async () => {
    try {
      const result = await api.resetSandbox();
      setSampleUser(null);
      setConfirming(false);
      const { products, endUsers, interactions, models, jobs } = result.deleted;
      setMessage(
        `Deleted ${products.toLocaleString()} products, ${endUsers.toLocaleString()} end users, ` +
          `${interactions.toLocaleString()} interactions, ${models.toLocaleString()} models and ` +
          `${jobs.toLocaleString()} jobs.`,
      );
    } finally {
      // Also after a failure: part of the data may be gone, and the counts should say so.
      after();
    }
  });
  return (
    <section class="card" aria-labelledby="sandbox-title">
      <h2 id="sandbox-title">Sandbox</h2>
      <p>
        On the FREE plan you can try everything on demo data: quick-start loads a demo catalogue with end
        users and their interactions and starts a training; reset deletes all the account's data.
      </p>
      {status.data !== undefined && (
        <p class="muted">
          Now: {status.data.counts.products.toLocaleString()} products,{" "}
          {status.data.counts.endUsers.toLocaleString()} end users,{" "}
          {status.data.counts.interactions.toLocaleString()} interactions,{" "}
          {status.data.counts.models.toLocaleString()} models.
        </p>
      )}
      <p class="row">
        <button type="button" onClick={() => void quickStart.run()} disabled={quickStart.busy || reset.busy}>
          Load demo data and train
        </button>
        <button
          type="button"
          class="danger"
          onClick={() => {
            reset.clear();
            setConfirming(true);
          }}
          disabled={quickStart.busy || reset.busy}
        >
          Reset the sandbox
        </button>
      </p>
      {message !== null && (
        <p class="notice" role="status" data-testid="sandbox-message">
          {message} {quickStart.error === undefined && <Link href="/training">See the training</Link>}
          {sampleUser !== null && (
            <>
              {" · "}
              <Link href={`/playground?user=${encodeURIComponent(sampleUser)}`}>
                Try the Playground as {sampleUser}
              </Link>
            </>
          )}
        </p>
      )}
      <ErrorNote error={quickStart.error ?? status.error} />
      <Confirm
        open={confirming}
        title="Reset the sandbox?"
        confirmLabel="Delete everything"
        typed="reset"
        busy={reset.busy}
        error={reset.error}
        onConfirm={() => void reset.run()}
        onCancel={() => setConfirming(false)}
      >
        <p>All products, end users, interactions, models and jobs of this account are deleted.</p>
      </Confirm>
    </section>
  );
}
