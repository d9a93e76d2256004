import { useRef, useState } from "preact/hooks";
import type { ResultMetric } from "../../../modules/experiments/schemas";
import { api, type Experiment, type ExperimentResults } from "../api";
import { Confirm, ErrorNote, formatDate, Loading, useAction, useAsync } from "../ui";
import { ExperimentForm } from "./experiment-form";

type Comparison = ExperimentResults["comparisons"][number];

const percent = (value: number): string => `${(value * 100).toFixed(2)}%`;
const signedPercent = (value: number): string => `${value >= 0 ? "+" : "−"}${percent(Math.abs(value))}`;

/** "Sample size still needed": the results route caps an unknowable figure at the largest integer. */
const UNKNOWN_NEEDED = 2147483647;
const needed = (n: number): string =>
  n === 0 ? "none (decided)" : n >= UNKNOWN_NEEDED ? "not yet estimable" : `${n.toLocaleString()} per arm`;

const METRIC_LABEL: Record<ResultMetric, string> = {
  ctr: "click-through rate",
  add_to_cart: "add-to-cart rate",
  conversion: "conversion rate",
  revenue: "revenue per impression",
};

/** Each metric's column of the arm: its rate, or revenue per 1,000 impressions (shown as an amount). */
const ARM_VALUE: Record<ResultMetric, (arm: ExperimentResults["arms"][number]) => ArmEstimate> = {
  ctr: (arm) => arm.clickThroughRate,
  add_to_cart: (arm) => arm.addToCartRate,
  conversion: (arm) => arm.conversionRate,
  revenue: (arm) => arm.revenuePerThousandImpressions,
};
type ArmEstimate = ExperimentResults["arms"][number]["clickThroughRate"];

const amount = (value: number): string => value.toLocaleString(undefined, { maximumFractionDigits: 4 });
const signedAmount = (value: number): string => `${value >= 0 ? "+" : "−"}${amount(Math.abs(value))}`;

const overridesText = (arm: Experiment["variants"][number]): string => {
  const entries = Object.entries(arm.overrides ?? {});
  return entries.length === 0 ? "as usual" : entries.map(([key, value]) => `${key} ${value}`).join(", ");
};

/** The account's A/B experiments on the Online results page, newest first. */
export function ExperimentsSection() {
  const list = useAsync(() => api.experiments(), []);
  const [creating, setCreating] = useState(false);
  const [started, setStarted] = useState<Experiment | null>(null);
  const newButton = useRef<HTMLButtonElement>(null);
  const closeForm = () => {
    setCreating(false);
    // Focus goes back where the person opened the form from, not to the top of the page.
    setTimeout(() => newButton.current?.focus(), 0);
  };
  return (
    <section class="card" aria-labelledby="experiments-title">
      <h2 id="experiments-title">Experiments</h2>
      <p class="muted">
        Each arm's metric against the control (the first arm). The sequential test may be read as often as you
        like without raising false positives; its verdict is "keep running" until the data decide.
      </p>
      {creating ? (
        <ExperimentForm
          onCancel={closeForm}
          onCreated={(experiment) => {
            setStarted(experiment);
            closeForm();
            list.reload();
          }}
        />
      ) : (
        <p>
          <button
            type="button"
            ref={newButton}
            onClick={() => {
              setStarted(null);
              setCreating(true);
            }}
          >
            New experiment
          </button>
        </p>
      )}
      {started !== null && (
        <p class="notice" role="status" data-testid="experiment-started">
          "{started.name}" is running on {started.endpoint} with {started.variants.length} arms.
        </p>
      )}
      <ErrorNote error={list.error} />
      {list.data === undefined ? (
        list.error === undefined && <Loading what="experiments" />
      ) : list.data.items.length === 0 ? (
        <p>No experiments yet.</p>
      ) : (
        list.data.items.map((experiment) => (
          <ExperimentCard key={experiment.id} experiment={experiment} onChanged={list.reload} />
        ))
      )}
    </section>
  );
}

function ExperimentCard({ experiment, onChanged }: { experiment: Experiment; onChanged: () => void }) {
  const [metric, setMetric] = useState<ResultMetric>("ctr");
  const results = useAsync(
    () => api.experimentResults(experiment.id, metric),
    [experiment.id, experiment.status, metric],
  );
  const [confirming, setConfirming] = useState(false);
  const stop = useAction(api.stopExperiment);
  const titleId = `experiment-${experiment.id}`;
  return (
    <article
      class="experiment"
      data-testid="experiment"
      data-status={experiment.status}
      aria-labelledby={titleId}
    >
      <h3 id={titleId}>
        {experiment.name} <span class="muted">on {experiment.endpoint}</span>
      </h3>
      <p>
        <span class={`badge ${experiment.status}`}>{experiment.status}</span>{" "}
        {experiment.stoppedAt === null
          ? `since ${formatDate(experiment.createdAt)}`
          : `${formatDate(experiment.stoppedAt)} · ran from ${formatDate(experiment.createdAt)}`}
      </p>
      <label>
        Compare the arms on
        <select value={metric} onChange={(e) => setMetric(e.currentTarget.value as ResultMetric)}>
          {(Object.keys(METRIC_LABEL) as ResultMetric[]).map((value) => (
            <option key={value} value={value}>
              {METRIC_LABEL[value]}
            </option>
          ))}
        </select>
      </label>
      <ErrorNote error={results.error} />
      {results.data === undefined ? (
        results.error === undefined && <Loading what="results" />
      ) : (
        <ResultsTable experiment={experiment} results={results.data} />
      )}
      {experiment.status === "running" && (
        <p class="row">
          <button type="button" class="danger" disabled={stop.busy} onClick={() => setConfirming(true)}>
            Stop experiment
          </button>
        </p>
      )}
      <Confirm
        open={confirming}
        title={`Stop "${experiment.name}"?`}
        confirmLabel="Stop experiment"
        busy={stop.busy}
        error={stop.error}
        onCancel={() => {
          setConfirming(false);
          stop.clear();
        }}
        onConfirm={async () => {
          if ((await stop.run(experiment.id)) === undefined) return;
          setConfirming(false);
          onChanged();
        }}
      >
        Every end user gets the endpoint's usual answers again. The results stay readable here.
      </Confirm>
    </article>
  );
}

/** A stopped experiment gathers no more data: "keep running" is no longer advice it can take. */
const verdictOf = (experiment: Experiment, verdict: string): string =>
  experiment.status !== "running" && verdict === "keep running" ? "undecided when stopped" : verdict;

function ResultsTable({ experiment, results }: { experiment: Experiment; results: ExperimentResults }) {
  const byArm = new Map<string, Comparison>(results.comparisons.map((c) => [c.variant, c]));
  const key = (results.metric in ARM_VALUE ? results.metric : "ctr") as ResultMetric;
  const metric = METRIC_LABEL[key];
  // Rates read as percentages; revenue as an amount (per 1,000 impressions by arm, per impression apart).
  const show = key === "revenue" ? amount : percent;
  const showDifference = key === "revenue" ? signedAmount : signedPercent;
  return (
    <>
      <p data-testid="experiment-verdict">
        Verdict on {metric}: <strong>{verdictOf(experiment, results.verdict)}</strong>
        {" · "}sample size still needed: {needed(results.impressionsNeeded)}
      </p>
      <div class="table-wrap">
        <table>
          <thead>
            <tr>
              <th scope="col">Arm</th>
              <th scope="col">Traffic</th>
              <th scope="col">Changes</th>
              <th scope="col">Impressions</th>
              <th scope="col">{key === "revenue" ? "Revenue per 1,000 impressions" : metric}</th>
              <th scope="col">
                Difference from control{key === "revenue" ? " per impression" : ""} (95% interval)
              </th>
              <th scope="col">Verdict</th>
              <th scope="col">Still needed</th>
            </tr>
          </thead>
          <tbody>
            {results.arms.map((arm, index) => {
              const comparison = byArm.get(arm.variant);
              const definition = experiment.variants.find((v) => v.name === arm.variant);
              return (
                <tr key={arm.variant} data-testid="experiment-arm">
                  <th scope="row">
                    {arm.variant}
                    {index === 0 && <span class="muted"> (control)</span>}
                  </th>
                  <td>{percent(arm.traffic)}</td>
                  <td>{definition === undefined ? "" : overridesText(definition)}</td>
                  <td>{arm.impressions.toLocaleString()}</td>
                  <td>
                    {show(ARM_VALUE[key](arm).value)} ({show(ARM_VALUE[key](arm).low)}–
                    {show(ARM_VALUE[key](arm).high)})
                  </td>
                  <td>
                    {comparison === undefined
                      ? "—"
                      : `${showDifference(comparison.difference)} (${showDifference(comparison.interval.low)} to ${showDifference(comparison.interval.high)})`}
                  </td>
                  <td>{comparison === undefined ? "—" : verdictOf(experiment, comparison.verdict)}</td>
                  <td>{comparison === undefined ? "—" : needed(comparison.impressionsNeeded)}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
    </>
  );
}
