/**
 * Hands an accepted request from the route to a worker of the same process, so the job does not read back
 * (and the database does not re-serialize) the payload it has just stored. The stored copy stays the source
 * of truth: a worker in another process, or this one after a restart, reads it from the job row. Only as
 * many records as the bound below are kept, and entries no local worker took in time are dropped.
 */
import type { Database } from "../../db/client";

/**
 * A request as stored with its job. Every record the client sent is an object; a null is a record an erasure
 * removed after the request was accepted (end-users/erase.ts), kept in place so the others keep their
 * positions, which the job's cursors and the record errors' `index` count in.
 */
export interface StoredBatch {
  products?: readonly unknown[];
  users?: readonly unknown[];
  interactions?: readonly unknown[];
}

/** How many of the records an erasure removed (see StoredBatch). */
export function erasedRecords(records: readonly unknown[]): number {
  let erased = 0;
  for (const record of records) if (record === null) erased++;
  return erased;
}

interface Entry {
  batch: StoredBatch;
  records: number;
  at: number;
}

const MAX_RECORDS = 10_000;
const MAX_AGE_MS = 60_000;

// Per database: several apps (tests) in one process have their own job ids.
const pending = new WeakMap<Database, { entries: Map<number, Entry>; records: number }>();

export function offerPayload(database: Database, jobId: number, batch: StoredBatch): void {
  let state = pending.get(database);
  if (state === undefined) {
    state = { entries: new Map(), records: 0 };
    pending.set(database, state);
  }
  const now = Date.now();
  for (const [id, entry] of state.entries) {
    if (now - entry.at < MAX_AGE_MS) break;
    state.entries.delete(id);
    state.records -= entry.records;
  }
  const records =
    (batch.products?.length ?? 0) + (batch.users?.length ?? 0) + (batch.interactions?.length ?? 0);
  // When full, newer jobs are left to read their row: the worker takes the oldest jobs first.
  if (state.records + records > MAX_RECORDS) return;
  state.entries.set(jobId, { batch, records, at: now });
  state.records += records;
}

export function takePayload(database: Database, jobId: number): StoredBatch | undefined {
  const state = pending.get(database);
  const entry = state?.entries.get(jobId);
  if (state === undefined || entry === undefined) return undefined;
  state.entries.delete(jobId);
  state.records -= entry.records;
  return entry.batch;
}
