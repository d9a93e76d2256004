import { contentFromDense } from "./content";
import type { Model } from "./model";

/*
 * Layout: "RECM" | u32 format | u32 headerBytes | JSON header | pad to 8 | arrays, each 8-byte aligned.
 * The header is the model with every typed array replaced by {"$a": index}; arrays are written raw
 * (little-endian, as in memory), so loading is a JSON parse plus zero-copy views into the buffer. Large
 * Float32Arrays that are mostly zeros (the hashed content vectors: about 10 of 256 dimensions set) are
 * written as their non-zero positions and values instead and expanded on load (format 2; format 1
 * artifacts, all arrays raw, still load). Models whose content vectors were such an array are converted to
 * the rows-by-non-zeros form on load.
 */
const MAGIC = 0x4d434552; // "RECM" read as little-endian u32
const FORMAT = 2;
const READABLE_FORMATS = new Set([1, 2]);
/** Arrays shorter than this are always written raw. */
const SPARSE_MIN_LENGTH = 4096;
/** Written sparse when at most this share of the values is non-zero (sparse costs 8 bytes per non-zero). */
const SPARSE_MAX_DENSITY = 0.25;

type Typed =
  | Int32Array
  | Float32Array
  | Float64Array
  | Uint8Array
  | Uint32Array
  | Int8Array
  | Int16Array
  | Uint16Array;
const CTORS = {
  Int32Array,
  Float32Array,
  Float64Array,
  Uint8Array,
  Uint32Array,
  Int8Array,
  Int16Array,
  Uint16Array,
};
type CtorName = keyof typeof CTORS;

interface ArrayRef {
  $a: number;
}
interface ArrayEntry {
  type: CtorName;
  offset: number;
  length: number;
  /** Sparse Float32Array: `nnz` u32 positions at `offset`, then `nnz` f32 values (8-byte aligned). */
  nnz?: number;
}

function countNonZero(a: Float32Array): number {
  let nnz = 0;
  for (let i = 0; i < a.length; i++) if (a[i] !== 0) nnz++;
  return nnz;
}

/** The raw bytes an entry occupies: the array itself, or its positions and values when sparse. */
function sparseParts(a: Float32Array, nnz: number): [Uint32Array, Float32Array] {
  const positions = new Uint32Array(nnz);
  const values = new Float32Array(nnz);
  let p = 0;
  for (let i = 0; i < a.length; i++) {
    if (a[i] !== 0) {
      positions[p] = i;
      values[p++] = a[i]!;
    }
  }
  return [positions, values];
}

const align8 = (n: number) => (n + 7) & ~7;

/** A mostly-zero Float32Array given by its non-zeros, written in the sparse form without being made whole. */
class SparseFloat32 {
  constructor(
    readonly length: number,
    readonly positions: Uint32Array,
    readonly values: Float32Array,
  ) {}
}

/**
 * The model as written: besides their rows of non-zeros, the content vectors are also written in the form
 * the previous release reads (`vectors`, the dense matrix, stored by its non-zeros, about 8 bytes each), so
 * that its processes can serve models trained by this one during a rolling upgrade or after a rollback.
 * Readers of this release skip it.
 */
function withPreviousContentForm(model: Model): Model {
  // Any tree of values can be written (tests write stand-ins): only rows of non-zeros are given the form.
  const c = model.content as Model["content"] | undefined;
  // Past 2^32 values the previous form cannot be addressed (nor held by the previous release).
  if (!c?.indptr || (c.indptr.length - 1) * c.dims > 0xffff_ffff) return model;
  const positions = new Uint32Array(c.data.length);
  for (let i = 0; i + 1 < c.indptr.length; i++) {
    for (let p = c.indptr[i]!; p < c.indptr[i + 1]!; p++) positions[p] = i * c.dims + c.indices[p]!;
  }
  const vectors = new SparseFloat32((c.indptr.length - 1) * c.dims, positions, c.data);
  return { ...model, content: { ...c, vectors } as Model["content"] };
}

export function serializeModel(model: Model): Uint8Array {
  const arrays: (Typed | SparseFloat32)[] = [];
  const header = JSON.stringify(withPreviousContentForm(model), (_key, value: unknown) => {
    if ((ArrayBuffer.isView(value) && !(value instanceof DataView)) || value instanceof SparseFloat32) {
      arrays.push(value as Typed | SparseFloat32);
      return { $a: arrays.length - 1 } satisfies ArrayRef;
    }
    return value;
  });
  const entries: ArrayEntry[] = [];
  const chunks: Typed[][] = [];
  let offset = 0;
  for (const a of arrays) {
    if (a instanceof SparseFloat32) {
      entries.push({ type: "Float32Array", offset, length: a.length, nnz: a.values.length });
      chunks.push([a.positions, a.values]);
      offset = align8(align8(offset + a.positions.byteLength) + a.values.byteLength);
      continue;
    }
    const type = a.constructor.name as CtorName;
    const nnz = a instanceof Float32Array && a.length >= SPARSE_MIN_LENGTH ? countNonZero(a) : -1;
    if (nnz >= 0 && nnz <= a.length * SPARSE_MAX_DENSITY) {
      const [positions, values] = sparseParts(a as Float32Array, nnz);
      entries.push({ type, offset, length: a.length, nnz });
      chunks.push([positions, values]);
      offset = align8(align8(offset + positions.byteLength) + values.byteLength);
    } else {
      entries.push({ type, offset, length: a.length });
      chunks.push([a]);
      offset = align8(offset + a.byteLength);
    }
  }
  const headerBytes = new TextEncoder().encode(
    JSON.stringify({ model: JSON.parse(header), arrays: entries }),
  );
  const dataStart = align8(12 + headerBytes.length);
  const out = new Uint8Array(dataStart + offset);
  const view = new DataView(out.buffer);
  view.setUint32(0, MAGIC, true);
  view.setUint32(4, FORMAT, true);
  view.setUint32(8, headerBytes.length, true);
  out.set(headerBytes, 12);
  for (let i = 0; i < arrays.length; i++) {
    let at = dataStart + entries[i]!.offset;
    for (const a of chunks[i]!) {
      out.set(new Uint8Array(a.buffer, a.byteOffset, a.byteLength), at);
      at = align8(at + a.byteLength);
    }
  }
  return out;
}

/** Inverse of serializeModel. Arrays are views into `bytes` when it is 8-byte aligned (else one copy). */
export function deserializeModel(bytes: Uint8Array): Model {
  if (bytes.byteOffset % 8 !== 0) bytes = bytes.slice();
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (bytes.byteLength < 12 || view.getUint32(0, true) !== MAGIC) throw new Error("not a model artifact");
  const format = view.getUint32(4, true);
  if (!READABLE_FORMATS.has(format)) throw new Error(`unsupported model format ${format}`);
  const headerLength = view.getUint32(8, true);
  const parsed = JSON.parse(new TextDecoder().decode(bytes.subarray(12, 12 + headerLength))) as {
    model: unknown;
    arrays: ArrayEntry[];
  };
  const dataStart = bytes.byteOffset + align8(12 + headerLength);
  const skipped = previousContentForm(parsed.model);
  const arrays = parsed.arrays.map((e, index) => {
    if (index === skipped) return null;
    const Ctor = CTORS[e.type];
    if (!Ctor) throw new Error(`unknown array type ${e.type}`);
    if (e.nnz === undefined) return new Ctor(bytes.buffer as ArrayBuffer, dataStart + e.offset, e.length);
    if (e.type !== "Float32Array") throw new Error(`sparse ${e.type} is not supported`);
    const at = dataStart + e.offset;
    const positions = new Uint32Array(bytes.buffer as ArrayBuffer, at, e.nnz);
    const values = new Float32Array(bytes.buffer as ArrayBuffer, align8(at + 4 * e.nnz), e.nnz);
    const dense = new Float32Array(e.length);
    for (let p = 0; p < e.nnz; p++) dense[positions[p]!] = values[p]!;
    return dense;
  });
  const revive = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(revive);
    if (value && typeof value === "object") {
      const ref = value as Partial<ArrayRef>;
      if (typeof ref.$a === "number" && Object.keys(value).length === 1) return arrays[ref.$a];
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(value)) out[k] = revive(v);
      return out;
    }
    return value;
  };
  return withContentRows(revive(parsed.model) as Model);
}

/** The array holding the content vectors' previous form when the rows of non-zeros are there too. */
function previousContentForm(model: unknown): number | undefined {
  const content = (model as { content?: { indptr?: unknown; vectors?: Partial<ArrayRef> } | null }).content;
  return content?.indptr !== undefined ? content.vectors?.$a : undefined;
}

/**
 * Models trained before content vectors were kept by their non-zeros hold them as one dense matrix
 * (`{dims, vectors}`): they are converted on load. Later ones carry that form beside the rows for earlier
 * readers (see `withPreviousContentForm`), dropped here. Every reader sees one shape.
 */
function withContentRows(model: Model): Model {
  const stored = model.content as unknown as
    | {
        dims: number;
        indptr?: Int32Array;
        vectors?: Float32Array | null;
      }
    | null
    | undefined;
  if (!stored) return model;
  if (stored.indptr !== undefined) delete stored.vectors;
  else if (stored.vectors) model.content = contentFromDense(stored.vectors, stored.dims);
  return model;
}

/** Bytes held by the typed arrays of a model (its in-memory size, whatever its serialized size). */
export function modelArrayBytes(value: unknown): number {
  if (ArrayBuffer.isView(value)) return value.byteLength;
  if (Array.isArray(value)) return value.reduce((sum: number, v) => sum + modelArrayBytes(v), 0);
  if (value !== null && typeof value === "object") {
    let sum = 0;
    for (const v of Object.values(value)) sum += modelArrayBytes(v);
    return sum;
  }
  return 0;
}
