/** The Data page's upload: a CSV or JSON file sent through the bulk route, with its progress. */
import { useState } from "preact/hooks";
import { api, type BatchJobStatus } from "../api";
import { ErrorNote, useAction } from "../ui";
import { type RecordKind, readRecords, toBatches } from "../upload-file";

interface UploadState {
  total: number;
  processed: number;
  jobs: BatchJobStatus[];
  done: boolean;
}

const processedOf = (job: BatchJobStatus): number =>
  job.processedProducts + job.processedUsers + job.processedInteractions;
const finished = (job: BatchJobStatus): boolean => job.status !== "processing";

export function Upload() {
  const [kind, setKind] = useState<RecordKind>("products");
  const [file, setFile] = useState<File | null>(null);
  const [state, setState] = useState<UploadState | null>(null);
  const upload = useAction(async () => {
    if (file === null) throw new Error("Choose a CSV or JSON file first.");
    const records = readRecords(file.name, await file.text(), kind);
    if (records.length === 0) throw new Error(`${file.name} holds no records.`);
    const jobs: BatchJobStatus[] = [];
    const show = (done: boolean) =>
      setState({
        total: records.length,
        processed: jobs.reduce((n, job) => n + processedOf(job), 0),
        jobs: [...jobs],
        done,
      });
    show(false);
    // Batches go one after another: each is followed until its job finishes, so the bar moves steadily
    // and the bulk rate limit is not spent on a burst.
    for (const batch of toBatches(records)) {
      const accepted = await api.submitBatch({ [kind]: batch });
      let job = await api.batch(accepted.jobId);
      jobs.push(job);
      while (!finished(job)) {
        show(false);
        await new Promise((resolve) => setTimeout(resolve, 1000));
        job = await api.batch(accepted.jobId);
        jobs[jobs.length - 1] = job;
      }
      show(false);
    }
    show(true);
  });
  const errors = state?.jobs.flatMap((job) => job.errors) ?? [];
  const failures = state?.jobs.filter((job) => job.status === "failed") ?? [];
  return (
    <section class="card" aria-labelledby="upload-title">
      <h2 id="upload-title">Upload a CSV or JSON file</h2>
      <p class="muted">
        CSV headers name the fields: products{" "}
        <code>externalId,name,price,category,brand,description,inStock</code>; end users{" "}
        <code>externalId,preferredCategories,priceRangeMin,priceRangeMax</code> (categories separated by{" "}
        <code>|</code>); interactions{" "}
        <code>external_user_id,external_product_id,interaction_type,value,timestamp</code>. Columns named{" "}
        <code>attributes.&lt;key&gt;</code> become attributes. JSON: an array of records, or an object with a{" "}
        <code>{kind}</code> array. Files are sent in batches of 1,000 records.
      </p>
      <form
        class="row"
        onSubmit={(event) => {
          event.preventDefault();
          void upload.run();
        }}
      >
        <label>
          What the file holds
          <select value={kind} onChange={(e) => setKind(e.currentTarget.value as RecordKind)}>
            <option value="products">Products</option>
            <option value="users">End users</option>
            <option value="interactions">Interactions</option>
          </select>
        </label>
        <label>
          File
          <input
            type="file"
            accept=".csv,.json,text/csv,application/json"
            onChange={(e) => setFile(e.currentTarget.files?.[0] ?? null)}
          />
        </label>
        <button type="submit" disabled={upload.busy || file === null}>
          Upload
        </button>
      </form>
      <ErrorNote error={upload.error} />
      {state !== null && (
        <div aria-live="polite">
          <label>
            Progress: {state.processed} of {state.total} records
            <progress max={state.total} value={state.processed} />
          </label>
          {state.done && (
            <p class="notice" role="status" data-testid="upload-done">
              Upload finished:{" "}
              {state.jobs.map((job) => `job ${job.jobId} ${job.status.replaceAll("_", " ")}`).join(", ")}.
            </p>
          )}
          {failures.map((job) => (
            <p class="error" key={job.jobId}>
              Job {job.jobId} failed: {job.failureReason}
            </p>
          ))}
          {errors.length > 0 && (
            <div class="table-wrap">
              <table>
                <caption>Records that were not applied ({errors.length})</caption>
                <thead>
                  <tr>
                    <th scope="col">Kind</th>
                    <th scope="col">Id</th>
                    <th scope="col">Problem</th>
                  </tr>
                </thead>
                <tbody>
                  {errors.map((error, at) => (
                    <tr key={at}>
                      <td>{error.recordType}</td>
                      <td>{error.externalId}</td>
                      <td>{error.errorMessage}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
        </div>
      )}
    </section>
  );
}
