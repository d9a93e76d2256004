/**
 * Model artifacts live in Postgres (model_artifact_chunks), so every process on the database can load any
 * account's snapshot and a model row never exists without its bytes (both are written in one transaction).
 * Chunks keep each bytea value small enough for both drivers and let readers stream into one buffer.
 */
import { and, eq, sql } from "drizzle-orm";
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

/** Reads an artifact chunk by chunk into one buffer; undefined when the model has no stored bytes. */
export async function readArtifact(database: Database, target: ArtifactRef): Promise<Uint8Array | undefined> {
  const [layout] = await database.rows<{ chunks: number; bytes: number | string | null }>(sql`
    select count(*)::int as chunks, sum(length(data))::float8 as bytes
    from model_artifact_chunks
    where model_id = ${target.modelId} and account_id = ${target.accountId}`);
  if (layout === undefined || layout.chunks === 0) return undefined;
  const out = new Uint8Array(Number(layout.bytes ?? 0));
  // Every chunk but the last is exactly ARTIFACT_CHUNK_BYTES, so each lands at a known offset and several
  // can be read at once (on Postgres the server detoasts them in parallel).
  const readChunk = async (seq: number): Promise<number> => {
    const data = await (database.kind === "postgres" ? readChunkBase64 : readChunkBytes)(
      database,
      target,
      seq,
    );
    if (data === undefined) throw new Error(`model ${target.modelId} is missing artifact chunk ${seq}`);
    out.set(data, seq * ARTIFACT_CHUNK_BYTES);
    return data.length;
  };
  let total = 0;
  for (let first = 0; first < layout.chunks; first += PARALLEL_READS) {
    const batch = [];
    for (let seq = first; seq < Math.min(layout.chunks, first + PARALLEL_READS); seq++)
      batch.push(readChunk(seq));
    for (const length of await Promise.all(batch)) total += length;
  }
  if (total !== out.length) throw new Error(`model ${target.modelId} artifact is incomplete`);
  return out;
}

/** PGlite hands bytea over as bytes. */
async function readChunkBytes(database: Database, target: ArtifactRef, seq: number) {
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
  return chunk?.data;
}

/**
 * postgres.js receives bytea as hex text (two characters a byte); base64 (Postgres breaks its lines, which the
 * decoder skips) is a third smaller and decodes faster. Reading is most of a snapshot's load when there is no
 * local copy: 208 MB took 0.71 s this way against 0.78–1.0 s as hex on the bench machine.
 */
async function readChunkBase64(database: Database, target: ArtifactRef, seq: number) {
  const [chunk] = await database.rows<{ data: string }>(sql`
    select encode(data, 'base64') as data from model_artifact_chunks
    where model_id = ${target.modelId} and account_id = ${target.accountId} and seq = ${seq}`);
  return chunk === undefined ? undefined : Buffer.from(chunk.data, "base64");
}
