import type { Model } from "./model";

/*
 * Layout: "RECM" | u32 format | u32 headerBytes | JSON header | pad to 8 | arrays, each 8-byte aligned.
 * The header is the model with every typed array replaced by {"$a": index}; arrays are written raw
 * (little-endian, as in memory), so loading is a JSON parse plus zero-copy views into the buffer.
 */
const MAGIC = 0x4d434552; // "RECM" read as little-endian u32
const FORMAT = 1;

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
}

const align8 = (n: number) => (n + 7) & ~7;

export function serializeModel(model: Model): Uint8Array {
  const arrays: Typed[] = [];
  const header = JSON.stringify(model, (_key, value: unknown) => {
    if (ArrayBuffer.isView(value) && !(value instanceof DataView)) {
      arrays.push(value as Typed);
      return { $a: arrays.length - 1 } satisfies ArrayRef;
    }
    return value;
  });
  const entries: ArrayEntry[] = [];
  let offset = 0;
  for (const a of arrays) {
    entries.push({ type: a.constructor.name as CtorName, offset, length: a.length });
    offset = align8(offset + a.byteLength);
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
    const a = arrays[i]!;
    out.set(new Uint8Array(a.buffer, a.byteOffset, a.byteLength), dataStart + entries[i]!.offset);
  }
  return out;
}

/** Inverse of serializeModel. Arrays are views into `bytes` when it is 8-byte aligned (else one copy). */
export function deserializeModel(bytes: Uint8Array): Model {
  if (bytes.byteOffset % 8 !== 0) bytes = bytes.slice();
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (bytes.byteLength < 12 || view.getUint32(0, true) !== MAGIC) throw new Error("not a model artifact");
  const format = view.getUint32(4, true);
  if (format !== FORMAT) throw new Error(`unsupported model format ${format}`);
  const headerLength = view.getUint32(8, true);
  const parsed = JSON.parse(new TextDecoder().decode(bytes.subarray(12, 12 + headerLength))) as {
    model: unknown;
    arrays: ArrayEntry[];
  };
  const dataStart = bytes.byteOffset + align8(12 + headerLength);
  const arrays = parsed.arrays.map((e) => {
    const Ctor = CTORS[e.type];
    if (!Ctor) throw new Error(`unknown array type ${e.type}`);
    return new Ctor(bytes.buffer as ArrayBuffer, dataStart + e.offset, e.length);
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
  return revive(parsed.model) as Model;
}
