/**
 * Adapts a tenant snapshot (src/snapshots) to the recommender's ItemTable and ModelSignals: zero-copy over
 * the snapshot's arrays (whose freshness fields the registry updates in place), with the engine model's
 * fold-in/EASE, content, co-occurrence and popularity behind the ModelSignals calls.
 */
import { sql } from "drizzle-orm";
import type { Database } from "../../db/client";
import { componentScores } from "../../engine/scoring";
import { topK } from "../../engine/topk";
import type { Snapshot } from "../../snapshots/types";
import type { EngineModel } from "../../training/engine-api";
import type { ItemTable } from "./item-table";
import type { ServingView } from "./service";
import type { DenseHistory, ModelSignals, ScoredItems } from "./signals";

const views = new WeakMap<Snapshot, ServingView>();

export function snapshotView(snapshot: Snapshot, database: Database): ServingView {
  let view = views.get(snapshot);
  if (view === undefined) {
    view = { table: snapshotTable(snapshot, database), signals: new EngineSignals(snapshot.model) };
    views.set(snapshot, view);
  }
  return view;
}

function snapshotTable(snapshot: Snapshot, database: Database): ItemTable {
  const items = snapshot.items;
  let attributes: Promise<(Record<string, unknown> | undefined)[]> | undefined;
  return {
    size: items.count,
    externalIds: items.externalIds,
    names: items.names,
    prices: items.prices,
    categories: items.categories,
    brands: items.brands,
    inStock: items.inStock,
    deleted: items.deleted,
    rating: items.meanRating,
    // Only attribute filters read these, so they are loaded on first use, once per snapshot.
    attributes: () => {
      attributes ??= loadAttributes(database, snapshot);
      attributes.catch(() => {
        attributes = undefined;
      });
      return attributes;
    },
    popularity: snapshot.model.popularity.score,
    indexOf: items.indexByExternalId,
  };
}

async function loadAttributes(
  database: Database,
  snapshot: Snapshot,
): Promise<(Record<string, unknown> | undefined)[]> {
  const rows = await database.rows<{ id: number | string; attributes: unknown }>(sql`
    select id, attributes from products
    where account_id = ${snapshot.accountId} and attributes <> '{}'::jsonb`);
  const out: (Record<string, unknown> | undefined)[] = new Array(snapshot.items.count);
  for (const row of rows) {
    const index = snapshot.items.indexByProductId.get(Number(row.id));
    if (index === undefined) continue;
    const value =
      typeof row.attributes === "string" ? (JSON.parse(row.attributes) as unknown) : row.attributes;
    if (value !== null && typeof value === "object" && !Array.isArray(value))
      out[index] = value as Record<string, unknown>;
  }
  return out;
}

/** Similarity blend for "similar items": taste (ALS factors) and content, when the model has both. */
const TASTE_SHARE = 0.6;

class EngineSignals implements ModelSignals {
  readonly trending: Float32Array;
  private factorNorms: Float32Array | null = null;

  constructor(private readonly model: EngineModel) {
    this.trending = model.popularity.trending;
  }

  collaborative(history: DenseHistory): Float32Array | null {
    const out = new Float32Array(this.model.nItems);
    return componentScores(this.model, history, "cf", out) ? out : null;
  }

  content(history: DenseHistory): Float32Array | null {
    const out = new Float32Array(this.model.nItems);
    return componentScores(this.model, history, "content", out) ? out : null;
  }

  similar(item: number, k: number): ScoredItems {
    const n = this.model.nItems;
    const als = this.model.als;
    const content = this.model.content;
    const scores = new Float32Array(n);
    if (als) {
      const norms = this.norms();
      const f = als.itemFactors;
      const dims = als.k;
      const o = item * dims;
      const share = content ? TASTE_SHARE : 1;
      const self = norms[item]!;
      if (self > 0) {
        for (let i = 0; i < n; i++) {
          if (norms[i] === 0) continue;
          let dot = 0;
          const p = i * dims;
          for (let d = 0; d < dims; d++) dot += f[o + d]! * f[p + d]!;
          scores[i]! += (share * dot) / (self * norms[i]!);
        }
      }
    }
    if (content) {
      const v = content.vectors;
      const dims = content.dims;
      const o = item * dims;
      const share = als ? 1 - TASTE_SHARE : 1;
      // Content vectors are L2-normalised: the dot product is the cosine.
      for (let i = 0; i < n; i++) {
        let dot = 0;
        const p = i * dims;
        for (let d = 0; d < dims; d++) dot += v[o + d]! * v[p + d]!;
        scores[i]! += share * dot;
      }
    }
    scores[item] = Number.NEGATIVE_INFINITY;
    const top = topK(scores, k);
    const out = new Float32Array(top.length);
    for (let j = 0; j < top.length; j++) out[j] = scores[top[j]!]!;
    return { items: top, scores: out };
  }

  complementary(item: number, k: number): ScoredItems {
    const csr = this.model.cooccurrence;
    if (item < 0 || item >= csr.nRows) return { items: new Int32Array(0), scores: new Float32Array(0) };
    const start = csr.indptr[item]!;
    const end = Math.min(csr.indptr[item + 1]!, start + k);
    return { items: csr.indices.subarray(start, end), scores: csr.data.subarray(start, end) };
  }

  itemSimilarity(a: number, b: number): number | null {
    const als = this.model.als;
    if (als) {
      const norms = this.norms();
      if (norms[a] === 0 || norms[b] === 0) return 0;
      let dot = 0;
      for (let d = 0; d < als.k; d++)
        dot += als.itemFactors[a * als.k + d]! * als.itemFactors[b * als.k + d]!;
      return dot / (norms[a]! * norms[b]!);
    }
    const content = this.model.content;
    if (!content) return null;
    let dot = 0;
    for (let d = 0; d < content.dims; d++)
      dot += content.vectors[a * content.dims + d]! * content.vectors[b * content.dims + d]!;
    return dot;
  }

  private norms(): Float32Array {
    if (this.factorNorms === null) {
      const als = this.model.als!;
      const n = this.model.nItems;
      const norms = new Float32Array(n);
      for (let i = 0; i < n; i++) {
        let s = 0;
        for (let d = 0; d < als.k; d++) s += als.itemFactors[i * als.k + d]! ** 2;
        norms[i] = Math.sqrt(s);
      }
      this.factorNorms = norms;
    }
    return this.factorNorms;
  }
}
