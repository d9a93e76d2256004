/**
 * Model artifacts live in Postgres (model_artifact_chunks), so every process on the database can load any
 * account's snapshot and a model row never exists without its bytes (both are written in one transaction).
 * Chunks keep each bytea value small enough for both drivers and let readers stream into one buffer.
 */
import { and, eq, sql } from "drizzle-orm";
import { BinaryCopyReader } from "../db/binary-copy";
import type { Database, DbOrTx } from "../db/client";
import { modelArtifactChunks } from "../db/schema";

/** Which model's artifact: always read and written within its account. */
export interface ArtifactRef {
  accountId: number;
  modelId: number;
}

export const ARTIFACT_CHUNK_BYTES = 4 * 1024 * 1024;
const PARALLEL_READS = 4;

export async function writeArtifact(tx: DbOrTx, target: ArtifactRef, bytes: Uint8Array): Promise<number> {
  let seq = 0;
  for (let at = 0; at < bytes.length || seq === 0; at += ARTIFACT_CHUNK_BYTES) {
    await tx.insert(modelArtifactChunks).values({
      modelId: target.modelId,
      accountId: target.accountId,
      seq,
      data: bytes.subarray(at, Math.min(bytes.length, at + ARTIFACT_CHUNK_BYTES)),
    });
    seq++;
  }
  return seq;
}

/** Reads an artifact into one buffer; undefined when the model has no stored bytes. */
export async function readArtifact(database: Database, target: ArtifactRef): Promise<Uint8Array | undefined> {
  const [layout] = await database.rows<{ chunks: number; bytes: number | string | null }>(sql`
    select count(*)::int as chunks, sum(length(data))::float8 as bytes
    from model_artifact_chunks
    where model_id = ${target.modelId} and account_id = ${target.accountId}`);
  if (layout === undefined || layout.chunks === 0) return undefined;
  const out = new Uint8Array(Number(layout.bytes ?? 0));
  const total =
    database.copyOut === undefined
      ? await readChunks(database, target, layout.chunks, out)
      : await copyChunks(database.copyOut, target, layout.chunks, out);
  if (total !== out.length) throw new Error(`model ${target.modelId} artifact is incomplete`);
  return out;
}

/**
 * Every chunk but the last is exactly ARTIFACT_CHUNK_BYTES, so each lands at a known offset and several can
 * be read at once. PGlite hands bytea over as bytes.
 */
async function readChunks(
  database: Database,
  target: ArtifactRef,
  chunks: number,
  out: Uint8Array,
): Promise<number> {
  const readChunk = async (seq: number): Promise<number> => {
    const [chunk] = await database.db
      .select({ data: modelArtifactChunks.data })
      .from(modelArtifactChunks)
      .where(
        and(
          eq(modelArtifactChunks.modelId, target.modelId),
          eq(modelArtifactChunks.accountId, target.accountId),
          eq(modelArtifactChunks.seq, seq),
        ),
      );
    if (chunk === undefined) throw new Error(`model ${target.modelId} is missing artifact chunk ${seq}`);
    placeChunk(target, out, seq, chunk.data.length);
    out.set(chunk.data, seq * ARTIFACT_CHUNK_BYTES);
    return chunk.data.length;
  };
  let total = 0;
  for (let first = 0; first < chunks; first += PARALLEL_READS) {
    const batch = [];
    for (let seq = first; seq < Math.min(chunks, first + PARALLEL_READS); seq++) batch.push(readChunk(seq));
    for (const length of await Promise.all(batch)) total += length;
  }
  return total;
}

/**
 * On Postgres the chunks come as one binary COPY, their bytes written into place as they arrive: postgres.js
 * would otherwise receive each bytea as text (hex, or base64 encoded by the server): a 208 MB artifact read
 * base64-encoded took 1.08–1.34 s on the bench machine, and 0.27–0.47 s copied in binary.
 */
async function copyChunks(
  copyOut: NonNullable<Database["copyOut"]>,
  target: ArtifactRef,
  chunks: number,
  out: Uint8Array,
): Promise<number> {
  const modelId = sqlInteger(target.modelId);
  const accountId = sqlInteger(target.accountId);
  const seqBytes = new Uint8Array(4);
  let column = -1;
  let seqFilled = 0;
  let offset = 0;
  let total = 0;
  const reader = new BinaryCopyReader({
    field(row, index, length) {
      column = index;
      if (index === 0) {
        if (length !== 4) throw new Error(`model ${modelId} artifact chunk ${row} has no sequence number`);
        seqFilled = 0;
        return;
      }
      const seq = new DataView(seqBytes.buffer).getInt32(0);
      // Rows come ordered by seq: a seq other than the row's number means a chunk is missing.
      if (seq !== row) throw new Error(`model ${modelId} is missing artifact chunk ${row}`);
      placeChunk(target, out, seq, length);
      offset = seq * ARTIFACT_CHUNK_BYTES;
    },
    bytes(piece) {
      if (column === 0) {
        seqBytes.set(piece, seqFilled);
        seqFilled += piece.length;
        return;
      }
      out.set(piece, offset);
      offset += piece.length;
      total += piece.length;
    },
  });
  await copyOut(
    `copy (select seq, data from model_artifact_chunks where model_id = ${modelId} and account_id = ${accountId} order by seq) to stdout (format binary)`,
    (piece) => reader.feed(piece),
  );
  if (!reader.done || reader.rows !== chunks) {
    throw new Error(`model ${modelId} artifact is incomplete`);
  }
  return total;
}

/** A chunk of this length at this seq must fit the buffer sized from the stored total. */
function placeChunk(target: ArtifactRef, out: Uint8Array, seq: number, length: number): void {
  if (length < 0 || seq * ARTIFACT_CHUNK_BYTES + length > out.length) {
    throw new Error(`model ${target.modelId} artifact chunk ${seq} does not fit its stored size`);
  }
}

/** COPY takes no parameters: ids go into its text only as integers. */
function sqlInteger(value: number): number {
  if (!Number.isSafeInteger(value)) throw new Error(`not an integer id: ${value}`);
  return value;
}
