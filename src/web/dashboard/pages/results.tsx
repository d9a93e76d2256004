import { useMemo, useState } from "preact/hooks";
import { api, type Grouping, type MetricsReport } from "../api";
import { ErrorNote, LineChart, Loading, useAsync } from "../ui";
import { ExperimentsSection } from "./experiments";

const GROUPINGS: { value: Grouping; label: string }[] = [
  { value: "endpoint", label: "Endpoint" },
  { value: "strategy", label: "Strategy" },
  { value: "variant", label: "Variant" },
];

type Estimate = MetricsReport["groups"][number]["clickThroughRate"];

const percent = (value: number): string => `${(value * 100).toFixed(2)}%`;
const estimate = (e: Estimate): string => `${percent(e.value)} (${percent(e.low)}–${percent(e.high)})`;

export function ResultsPage() {
  const [groupBy, setGroupBy] = useState<Grouping>("endpoint");
  const report = useAsync(() => api.recommendationMetrics(groupBy), [groupBy]);
  const daily = useAsync(() => api.recommendationMetrics("day"), []);
  return (
    <>
      <h1 tabIndex={-1}>Online results</h1>
      <p class="muted">
        What shoppers did with the recommendations over the last 30 days: clicks, carts and purchases are
        credited to the answer that showed the product. Rates show their 95% confidence interval.
      </p>
      <section class="card" aria-labelledby="results-title">
        <h2 id="results-title">By {groupBy}</h2>
        <label>
          Group by
          <select value={groupBy} onChange={(e) => setGroupBy(e.currentTarget.value as Grouping)}>
            {GROUPINGS.map((one) => (
              <option key={one.value} value={one.value}>
                {one.label}
              </option>
            ))}
          </select>
        </label>
        <ErrorNote error={report.error} />
        {report.data === undefined ? (
          report.error === undefined && <Loading what="results" />
        ) : report.data.groups.length === 0 ? (
          <p>No recommendations were shown in this period.</p>
        ) : (
          <div class="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">{GROUPINGS.find((one) => one.value === groupBy)?.label}</th>
                  <th scope="col">Impressions</th>
                  <th scope="col">Clicks</th>
                  <th scope="col">Click-through rate</th>
                  <th scope="col">Carts</th>
                  <th scope="col">Purchases</th>
                  <th scope="col">Conversion rate</th>
                  <th scope="col">Revenue</th>
                </tr>
              </thead>
              <tbody>
                {report.data.groups.map((group) => (
                  <tr key={group.group}>
                    <th scope="row">{group.group}</th>
                    <td>{group.impressions.toLocaleString()}</td>
                    <td>{group.clicks.toLocaleString()}</td>
                    <td>{estimate(group.clickThroughRate)}</td>
                    <td>{group.addToCarts.toLocaleString()}</td>
                    <td>{group.purchases.toLocaleString()}</td>
                    <td>{estimate(group.conversionRate)}</td>
                    <td>{group.revenue.toLocaleString()}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
      {daily.data !== undefined && daily.data.groups.length > 1 && <DailyRates report={daily.data} />}
      <ExperimentsSection />
    </>
  );
}

function DailyRates({ report }: { report: MetricsReport }) {
  const x = useMemo(() => report.groups.map((group) => Date.parse(group.group) / 1000), [report]);
  const series = useMemo(
    () => [
      {
        label: "Click-through rate",
        values: report.groups.map((g) => g.clickThroughRate.value),
        color: "--series-1",
      },
      {
        label: "Conversion rate",
        values: report.groups.map((g) => g.conversionRate.value),
        color: "--series-3",
      },
    ],
    [report],
  );
  return (
    <section class="card" aria-labelledby="daily-title">
      <h2 id="daily-title">Day by day</h2>
      <LineChart
        caption="Click-through and conversion rate per day"
        x={x}
        xLabel="Day"
        series={series}
        time
      />
    </section>
  );
}
