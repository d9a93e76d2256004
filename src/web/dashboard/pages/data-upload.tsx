/** The Data page's upload: a CSV or JSON file sent through the bulk route, with its progress and refusals. */
import { useState } from "preact/hooks";
import { ErrorNote, useAction } from "../ui";
import { BATCH_SIZE, type RecordKind, readUploadFile } from "../upload-file";
import { failedJobs, jobsSummary, refusals, sendUpload, tally, type UploadRun } from "../upload-send";

export function Upload() {
  const [kind, setKind] = useState<RecordKind>("products");
  const [file, setFile] = useState<File | null>(null);
  const [run, setRun] = useState<UploadRun | null>(null);
  const upload = useAction(async () => {
    if (file === null) throw new Error("Choose a CSV or JSON file first.");
    const read = readUploadFile(file.name, await file.text(), kind);
    if (read.records.length === 0) throw new Error(`${file.name} holds no records.`);
    await sendUpload({ fileName: file.name, kind, file: read, sent: [], waiting: null, done: false }, setRun);
  });
  const resume = useAction(async (stopped: UploadRun) => sendUpload(stopped, setRun));
  const busy = upload.busy || resume.busy;
  const error = upload.error ?? resume.error;
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
        <code>{kind}</code> array. Files are sent in batches of {BATCH_SIZE.toLocaleString()} records, at most
        10 batches a minute.
      </p>
      <form
        class="row"
        onSubmit={(event) => {
          event.preventDefault();
          resume.clear();
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
        <button type="submit" disabled={busy || file === null}>
          Upload
        </button>
      </form>
      <ErrorNote error={error} />
      {run !== null && <Progress run={run} busy={busy} onResume={() => void resume.run(run)} />}
    </section>
  );
}

function Progress({ run, busy, onResume }: { run: UploadRun; busy: boolean; onResume: () => void }) {
  const total = run.file.records.length;
  const { processed, applied, refused } = tally(run);
  const refusedRows = refusals(run);
  const stopped = !busy && !run.done;
  const accepted = Math.min(run.sent.length * BATCH_SIZE, total);
  return (
    <div aria-live="polite">
      <label>
        Progress: {processed.toLocaleString()} of {total.toLocaleString()} records processed
        {processed > 0 && ` (${applied.toLocaleString()} applied, ${refused.toLocaleString()} refused)`}
        <progress max={total} value={processed} />
      </label>
      {run.waiting !== null && (
        <p class="muted" data-testid="upload-waiting">
          Waiting {run.waiting.seconds} s for {run.waiting.limit}, then the upload goes on by itself.
        </p>
      )}
      {stopped && (
        <p class="row" data-testid="upload-stopped">
          <span>
            The upload stopped with {accepted.toLocaleString()} of {total.toLocaleString()} records sent.{" "}
            {accepted < total
              ? `Continuing sends the other ${(total - accepted).toLocaleString()} only, never one twice.`
              : "Continuing follows their jobs to the end."}
          </span>
          <button type="button" onClick={onResume}>
            Continue the upload
          </button>
        </p>
      )}
      {run.done && (
        <p class="notice" role="status" data-testid="upload-done">
          Upload of {run.fileName} finished: {applied.toLocaleString()} of {total.toLocaleString()} records
          applied, {refused.toLocaleString()} refused ({jobsSummary(run)}).
        </p>
      )}
      {failedJobs(run).map((job) => (
        <p class="error" key={job.jobId}>
          Job {job.jobId} failed: {job.failureReason}
        </p>
      ))}
      {refusedRows.length > 0 && (
        <div class="table-wrap">
          <table>
            <caption>Records that were not applied ({refusedRows.length.toLocaleString()})</caption>
            <thead>
              <tr>
                <th scope="col">Where in the file</th>
                <th scope="col">Kind</th>
                <th scope="col">Id</th>
                <th scope="col">Problem</th>
              </tr>
            </thead>
            <tbody>
              {refusedRows.map((error, at) => (
                <tr key={at}>
                  <td>{error.place}</td>
                  <td>{error.recordType}</td>
                  <td>{error.externalId === "" || error.externalId === ":" ? "—" : error.externalId}</td>
                  <td>{error.errorMessage}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </div>
  );
}
