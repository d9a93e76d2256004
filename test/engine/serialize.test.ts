import { describe, expect, test } from "bun:test";
import { buildContentVectors, contentRow } from "../../src/engine/content";
import type { Model } from "../../src/engine/model";
import { deserializeModel, serializeModel } from "../../src/engine/serialize";

/** A stand-in model: the format stores any tree of plain values and typed arrays. */
function modelWith(arrays: Record<string, unknown>): Model {
  return { nItems: 3, note: "x", ...arrays } as unknown as Model;
}

function mostlyZeros(length: number, every: number): Float32Array {
  const a = new Float32Array(length);
  for (let i = 0; i < length; i += every) a[i] = (i % 7) - 3.5;
  return a;
}

describe("model format", () => {
  test("a mostly-zero Float32Array is stored by its non-zeros and loads back exactly", () => {
    const sparse = mostlyZeros(256_000, 25);
    const dense = Float32Array.from({ length: 10_000 }, (_, i) => i + 0.5);
    const model = modelWith({
      mostly: { zeros: sparse, dims: 256 },
      dense,
      ints: Int32Array.from([1, 2, 3]),
    });
    const bytes = serializeModel(model);
    // About 8 bytes per non-zero instead of 4 bytes per value.
    expect(bytes.byteLength).toBeLessThan(sparse.byteLength / 2 + dense.byteLength + 4096);
    const back = deserializeModel(bytes) as unknown as {
      mostly: { zeros: Float32Array; dims: number };
      dense: Float32Array;
      ints: Int32Array;
    };
    expect(back.mostly.zeros).toEqual(sparse);
    expect(back.mostly.dims).toBe(256);
    expect(back.dense).toEqual(dense);
    expect(back.ints).toEqual(Int32Array.from([1, 2, 3]));
    expect(serializeModel(back as unknown as Model)).toEqual(bytes);
  });

  test("content vectors stored whole by models trained before are read as rows of non-zeros", () => {
    const items = Array.from({ length: 300 }, (_, i) => ({
      name: `item ${i % 17} colour ${i % 5}`,
      categoryPath: `c${i % 9}`,
      brand: `b${i % 4}`,
    }));
    const content = buildContentVectors(items, items.length, { dims: 64 });
    const dense = new Float32Array(items.length * 64);
    for (let i = 0; i < items.length; i++) contentRow(content, i, dense.subarray(i * 64, (i + 1) * 64));
    // Large and mostly zeros: written by its non-zeros (format 2).
    expect(
      deserializeModel(serializeModel(modelWith({ content: { dims: 64, vectors: dense } }))).content,
    ).toEqual(content);
    // Small: written raw, as format 1 wrote every array.
    const head = dense.slice(0, 64 * 50);
    const raw = deserializeModel(serializeModel(modelWith({ content: { dims: 64, vectors: head } })));
    expect(raw.content!.indptr).toEqual(content.indptr.subarray(0, 51));
    expect(raw.content!.indices).toEqual(content.indices.subarray(0, content.indptr[50]!));
    expect(raw.content!.data).toEqual(content.data.subarray(0, content.indptr[50]!));
  });

  test("content rows load back as they were, and the previous release's reader finds its dense matrix", () => {
    const items = Array.from({ length: 400 }, (_, i) => ({ name: `thing ${i % 23}`, brand: `b${i % 6}` }));
    const content = buildContentVectors(items, items.length, { dims: 64 });
    const bytes = serializeModel(modelWith({ content }));
    const back = deserializeModel(bytes);
    expect(back.content).toEqual(content);
    expect(Object.keys(back.content!).sort()).toEqual(["data", "dims", "indices", "indptr"]);
    // As the previous release read it: every array made whole from the header's entries, no conversion.
    const view = new DataView(bytes.buffer, bytes.byteOffset);
    const headerLength = view.getUint32(8, true);
    const { model, arrays } = JSON.parse(new TextDecoder().decode(bytes.subarray(12, 12 + headerLength)));
    const entry = arrays[model.content.vectors.$a];
    const at = bytes.byteOffset + ((12 + headerLength + 7) & ~7) + entry.offset;
    const positions = new Uint32Array(bytes.buffer, at, entry.nnz);
    const values = new Float32Array(bytes.buffer, (at + 4 * entry.nnz + 7) & ~7, entry.nnz);
    const dense = new Float32Array(entry.length);
    for (let p = 0; p < entry.nnz; p++) dense[positions[p]!] = values[p]!;
    expect(model.content.dims).toBe(64);
    for (let i = 0; i < items.length; i++) {
      expect(dense.subarray(i * 64, (i + 1) * 64)).toEqual(contentRow(content, i, new Float32Array(64)));
    }
  });

  test("small or dense arrays stay raw, and an all-zero array survives", () => {
    const model = modelWith({
      small: new Float32Array(100),
      zeros: new Float32Array(8192),
      dense: mostlyZeros(8192, 2),
    });
    const back = deserializeModel(serializeModel(model)) as unknown as Record<string, Float32Array>;
    expect(back.small).toEqual(new Float32Array(100));
    expect(back.zeros).toEqual(new Float32Array(8192));
    expect(back.dense).toEqual(mostlyZeros(8192, 2));
  });

  test("artifacts of the previous format (every array raw) still load", () => {
    const dense = Float32Array.from({ length: 5000 }, (_, i) => i);
    const bytes = serializeModel(modelWith({ dense }));
    // Without sparse arrays the layout is the previous format's; only the version field differs.
    new DataView(bytes.buffer, bytes.byteOffset).setUint32(4, 1, true);
    const back = deserializeModel(bytes) as unknown as { dense: Float32Array };
    expect(back.dense).toEqual(dense);
  });

  test("an unknown format is refused", () => {
    const bytes = serializeModel(modelWith({}));
    new DataView(bytes.buffer, bytes.byteOffset).setUint32(4, 99, true);
    expect(() => deserializeModel(bytes)).toThrow("unsupported model format 99");
  });
});
