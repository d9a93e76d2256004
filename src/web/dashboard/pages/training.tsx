import { useEffect, useMemo, useRef } from "preact/hooks";
import { api, type ModelMetadata, type TrainingJob } from "../api";
import {
  ErrorNote,
  formatDate,
  formatNumber,
  LineChart,
  Loading,
  useAction,
  useAsync,
  useInterval,
} from "../ui";

const active = (job: TrainingJob): boolean => job.status === "queued" || job.status === "running";

export function TrainingPage() {
  const jobs = useAsync(() => api.listTrainingJobs(20), []);
  const models = useAsync(() => api.listModels(50), []);
  const running = jobs.data?.some(active) ?? false;
  // While a job is queued or running its progress is read every three seconds (a signed-in user's pages
  // have a per-minute window of their own); the models are read again when a job has finished.
  useInterval(jobs.reload, 3000, running);
  const finishedJobs = jobs.data?.filter((job) => !active(job)).length;
  const seenFinished = useRef(finishedJobs);
  const reloadModels = models.reload;
  useEffect(() => {
    if (finishedJobs === undefined) return;
    if (seenFinished.current !== undefined && finishedJobs > seenFinished.current) reloadModels();
    seenFinished.current = finishedJobs;
  }, [finishedJobs, reloadModels]);
  const train = useAction(async () => {
    await api.train();
    jobs.reload();
  });
  return (
    <>
      <h1 tabIndex={-1}>Training</h1>
      <section class="card">
        <p>
          A training reads every product, end user and interaction, fits a model, measures it on held-out
          users against the popularity baseline and publishes it when it does better than the one serving now.
        </p>
        <button type="button" onClick={() => void train.run()} disabled={train.busy || running}>
          {running ? "Training under way…" : "Start a training"}
        </button>
        <ErrorNote error={train.error} />
      </section>
      <section class="card" aria-labelledby="jobs-title">
        <h2 id="jobs-title">Jobs</h2>
        <ErrorNote error={jobs.error} />
        {jobs.data === undefined ? (
          jobs.error === undefined && <Loading what="training jobs" />
        ) : jobs.data.length === 0 ? (
          <p>No training yet.</p>
        ) : (
          <div class="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">Job</th>
                  <th scope="col">Status</th>
                  <th scope="col">Progress</th>
                  <th scope="col">Started</th>
                  <th scope="col">Finished</th>
                  <th scope="col">Outcome</th>
                </tr>
              </thead>
              <tbody>
                {jobs.data.map((job) => (
                  <tr key={job.jobId} data-testid="training-job" data-status={job.status}>
                    <td>{job.jobId}</td>
                    <td>{job.status}</td>
                    <td>
                      <label>
                        <span>
                          {job.progress}% · {job.stage}
                        </span>
                        <progress max={100} value={job.progress} aria-label={`Job ${job.jobId} progress`} />
                      </label>
                    </td>
                    <td>{formatDate(job.startedAt)}</td>
                    <td>{formatDate(job.finishedAt)}</td>
                    <td>
                      <JobOutcome job={job} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
      <ModelHistory models={models.data} error={models.error} />
    </>
  );
}

function JobOutcome({ job }: { job: TrainingJob }) {
  if (job.error !== null) return <>{job.error}</>;
  const decision = job.metrics?.decision;
  if (decision === undefined || decision === null)
    return <>{job.modelId === null ? "—" : `model ${job.modelId}`}</>;
  // The reason ends by saying what became of the model ("…: published", "…: kept the published model").
  return <>{decision.reason}</>;
}

function ModelHistory({ models, error }: { models: ModelMetadata[] | undefined; error: unknown }) {
  const ordered = useMemo(() => [...(models ?? [])].sort((a, b) => a.version - b.version), [models]);
  const x = useMemo(() => ordered.map((model) => model.version), [ordered]);
  const quality = useMemo(
    () => [
      { label: "NDCG@10", values: ordered.map((m) => m.metrics.ndcgAt10), color: "--series-1" },
      {
        label: "Popularity NDCG@10",
        values: ordered.map((m) => m.metrics.popularityNdcgAt10),
        color: "--series-2",
        dash: [6, 4],
      },
    ],
    [ordered],
  );
  const reach = useMemo(
    () => [
      { label: "Recall@20", values: ordered.map((m) => m.metrics.recallAt20), color: "--series-1" },
      { label: "Coverage@10", values: ordered.map((m) => m.metrics.coverageAt10), color: "--series-3" },
    ],
    [ordered],
  );
  return (
    <section class="card" aria-labelledby="models-title">
      <h2 id="models-title">Model history</h2>
      <ErrorNote error={error} />
      {models === undefined ? (
        error === undefined && <Loading what="models" />
      ) : models.length === 0 ? (
        <p>No model yet.</p>
      ) : (
        <>
          <div class="grid">
            <LineChart
              caption="NDCG@10 by model version, beside the popularity baseline"
              x={x}
              xLabel="Version"
              wholeX
              series={quality}
            />
            <LineChart
              caption="Recall@20 and coverage@10 by model version"
              x={x}
              xLabel="Version"
              wholeX
              series={reach}
            />
          </div>
          <div class="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">Version</th>
                  <th scope="col">Trained</th>
                  <th scope="col">Algorithm</th>
                  <th scope="col">NDCG@10</th>
                  <th scope="col">Popularity NDCG@10</th>
                  <th scope="col">Recall@20</th>
                  <th scope="col">Coverage@10</th>
                  <th scope="col">Users · items · interactions</th>
                  <th scope="col">Published</th>
                </tr>
              </thead>
              <tbody>
                {[...ordered].reverse().map((model) => (
                  <tr key={model.modelId}>
                    <td>{model.version}</td>
                    <td>{formatDate(model.createdAt)}</td>
                    <td>{model.algorithm}</td>
                    <td>{formatNumber(model.metrics.ndcgAt10)}</td>
                    <td>{formatNumber(model.metrics.popularityNdcgAt10)}</td>
                    <td>{formatNumber(model.metrics.recallAt20)}</td>
                    <td>{formatNumber(model.metrics.coverageAt10)}</td>
                    <td>
                      {model.counts.users.toLocaleString()} · {model.counts.items.toLocaleString()} ·{" "}
                      {model.counts.interactions.toLocaleString()}
                    </td>
                    <td>{model.isPublished ? <span class="badge ok">published</span> : "no"}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </>
      )}
    </section>
  );
}
