import type { CategoryIndex } from "./categories";
import type { ContentVectors } from "./content";
import type { EaseModel } from "./ease";
import type { FoldInBasis } from "./fold-in";
import type { PopularityModel } from "./popularity";
import type { Csr } from "./sparse";
import type { WeightConfig } from "./weighting";

/** Blend weights of the production scorer; each component is scaled to max |score| = 1 per request first. */
export interface BlendWeights {
  /** Primary collaborative signal: EASE when the model has it, else ALS. */
  cf: number;
  /** ALS dot products as a second collaborative opinion (only when EASE is primary). */
  als: number;
  content: number;
  popularity: number;
}

/** Everything serving needs, in dense item indices (callers map external ids). */
export interface Model {
  formatVersion: 1;
  nItems: number;
  /** Hyper-parameters and provenance, JSON-serialisable. */
  params: Record<string, unknown>;
  weights: WeightConfig;
  blend: BlendWeights;
  easeValues: "binary" | "weight" | "log";
  ease: EaseModel | null;
  als: FoldInBasis | null;
  content: ContentVectors | null;
  categories: CategoryIndex;
  popularity: PopularityModel;
  /** Item → top co-occurring items ("bought together"), scores in `data`. */
  cooccurrence: Csr;
  /**
   * Serialized HNSW indexes (hnswlib format) over ALS item factors (inner product) and content vectors
   * (cosine); null when the catalogue is small enough that exact scoring is faster.
   */
  ann: { factors: Uint8Array | null; content: Uint8Array | null };
}
