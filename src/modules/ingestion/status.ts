import type { ingestionJobs } from "../../db/schema";
import type { BatchJobStatus } from "./schemas";

type JobRow = typeof ingestionJobs.$inferSelect;

/**
 * The public job status. While processing, the completion estimate projects the rate so far (records per
 * second since the job started) over the records left; before the first chunk there is no rate yet.
 */
export function toBatchJobStatus(row: JobRow, now = Date.now()): BatchJobStatus {
  return {
    jobId: row.id,
    taskId: row.taskId,
    status: row.status,
    totalUsers: row.totalUsers,
    totalProducts: row.totalProducts,
    totalInteractions: row.totalInteractions,
    processedUsers: row.processedUsers,
    processedProducts: row.processedProducts,
    processedInteractions: row.processedInteractions,
    errors: row.errors,
    failureReason: row.failureReason,
    createdAt: row.createdAt.toISOString(),
    startedAt: row.startedAt?.toISOString() ?? null,
    finishedAt: row.finishedAt?.toISOString() ?? null,
    estimatedCompletionAt: estimate(row, now),
  };
}

function estimate(row: JobRow, now: number): string | null {
  if (row.finishedAt !== null) return row.finishedAt.toISOString();
  if (row.status !== "processing" || row.startedAt === null) return null;
  const total = row.totalUsers + row.totalProducts + row.totalInteractions;
  const done = row.processedUsers + row.processedProducts + row.processedInteractions;
  const elapsed = now - row.startedAt.getTime();
  if (done === 0 || elapsed <= 0) return null;
  return new Date(now + ((total - done) * elapsed) / done).toISOString();
}
