/**
 * Sends an uploaded file's records to the bulk route one batch after another, each followed until its job
 * finishes, so the progress bar moves steadily. The bulk route admits 10 batches a minute on every plan: a
 * 429 with a short Retry-After is waited out and the same batch sent again. Any other failure stops at the
 * batch that failed, and `sendUpload` continues from there, so nothing is sent twice.
 */
import { ApiError, api, type BatchJobStatus } from "./api";
import { BATCH_SIZE, type RecordKind, type UploadFile } from "./upload-file";

/** Waits up to this long on our own; a longer one (the hourly or daily bulk window) is the person's call. */
const LONGEST_WAIT_SECONDS = 120;
const POLL_MS = 1000;

export interface UploadRun {
  fileName: string;
  kind: RecordKind;
  file: UploadFile;
  /**
   * One per batch the service accepted, in the file's order (batch `n` holds the records from
   * `n * BATCH_SIZE`), with its job's latest status once read. The next batch to send is `sent.length`.
   */
  sent: { jobId: number; job: BatchJobStatus | null }[];
  /** Seconds left before the batch is sent again, while a limit is waited out. */
  waiting: { seconds: number; limit: string } | null;
  done: boolean;
}

const jobsOf = (run: UploadRun): BatchJobStatus[] =>
  run.sent.flatMap(({ job }) => (job === null ? [] : [job]));

const processedOf = (job: BatchJobStatus): number =>
  job.processedProducts + job.processedUsers + job.processedInteractions;

/** Records the service has gone through, and of those how many it refused (listed in the jobs' errors). */
export function tally(run: UploadRun): { processed: number; refused: number; applied: number } {
  const jobs = jobsOf(run);
  const processed = jobs.reduce((n, job) => n + processedOf(job), 0);
  const refused = jobs.reduce((n, job) => n + job.errors.length, 0);
  return { processed, refused, applied: Math.max(0, processed - refused) };
}

/** The refused records, with where each is in the file (its id may be what is missing). */
export function refusals(run: UploadRun) {
  return run.sent.flatMap(({ job }, batch) =>
    (job?.errors ?? []).map((error) => ({
      ...error,
      place: error.index === undefined ? "—" : run.file.placeOf(batch * BATCH_SIZE + error.index),
    })),
  );
}

/** The jobs that failed as a whole (a refused record does not fail its job). */
export const failedJobs = (run: UploadRun): BatchJobStatus[] =>
  jobsOf(run).filter((job) => job.status === "failed");

export const jobsSummary = (run: UploadRun): string =>
  jobsOf(run)
    .map((job) => `job ${job.jobId} ${job.status.replaceAll("_", " ")}`)
    .join(", ");

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Calls `request`, waiting out 429s whose Retry-After is short enough, and telling `onWait` each second. */
async function patiently<T>(
  request: () => Promise<T>,
  limit: string,
  onWait: (waiting: UploadRun["waiting"]) => void,
): Promise<T> {
  for (;;) {
    try {
      return await request();
    } catch (error) {
      if (
        !(error instanceof ApiError) ||
        error.status !== 429 ||
        error.retryAfter === null ||
        error.retryAfter > LONGEST_WAIT_SECONDS
      )
        throw error;
      for (let seconds = Math.max(1, error.retryAfter); seconds > 0; seconds--) {
        onWait({ seconds, limit });
        await pause(1000);
      }
      onWait(null);
    }
  }
}

/**
 * Sends the batches of `start` not yet accepted and follows every job until it finishes, calling `show` with
 * each change. Throws the failure that stopped it; the run it last showed is where to continue from.
 */
export async function sendUpload(start: UploadRun, show: (run: UploadRun) => void): Promise<void> {
  let run: UploadRun = { ...start, sent: [...start.sent], waiting: null, done: false };
  const update = (change: Partial<UploadRun>) => {
    run = { ...run, ...change };
    show(run);
  };
  const onWait = (waiting: UploadRun["waiting"]) => update({ waiting });
  const follow = async (batch: number) => {
    const { jobId } = run.sent[batch]!;
    for (;;) {
      const job = await patiently(() => api.batch(jobId), "the request limit", onWait);
      update({ sent: run.sent.map((one, at) => (at === batch ? { jobId, job } : one)) });
      if (job.status !== "processing") return;
      await pause(POLL_MS);
    }
  };
  show(run);
  // A run stopped while following a job follows it to its end first.
  for (const [batch, { job }] of run.sent.entries()) {
    if (job === null || job.status === "processing") await follow(batch);
  }
  const { records } = run.file;
  for (let batch = run.sent.length; batch * BATCH_SIZE < records.length; batch++) {
    const slice = records.slice(batch * BATCH_SIZE, (batch + 1) * BATCH_SIZE);
    const accepted = await patiently(
      () => api.submitBatch({ [run.kind]: slice }),
      "the bulk-ingestion limit",
      onWait,
    );
    // Accepted: whatever fails from here on, this batch is never sent again.
    update({ sent: [...run.sent, { jobId: accepted.jobId, job: null }] });
    await follow(batch);
  }
  update({ done: true });
}
