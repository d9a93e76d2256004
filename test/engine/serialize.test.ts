import { describe, expect, test } from "bun:test";
import type { Model } from "../../src/engine/model";
import { deserializeModel, nonZeroPositions, serializeModel } from "../../src/engine/serialize";
import { sparseRows } from "../../src/modules/recommendations/serving/vector-rows";

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
      content: { vectors: sparse, dims: 256 },
      dense,
      ints: Int32Array.from([1, 2, 3]),
    });
    const bytes = serializeModel(model);
    // About 8 bytes per non-zero instead of 4 bytes per value.
    expect(bytes.byteLength).toBeLessThan(sparse.byteLength / 2 + dense.byteLength + 4096);
    const back = deserializeModel(bytes) as unknown as {
      content: { vectors: Float32Array; dims: number };
      dense: Float32Array;
      ints: Int32Array;
    };
    expect(back.content.vectors).toEqual(sparse);
    expect(back.content.dims).toBe(256);
    expect(back.dense).toEqual(dense);
    expect(back.ints).toEqual(Int32Array.from([1, 2, 3]));
    expect(serializeModel(back as unknown as Model)).toEqual(bytes);
  });

  test("a loaded sparse array knows its non-zero positions; its rows read through them equal a full scan", () => {
    const sparse = mostlyZeros(256_000, 25);
    const back = deserializeModel(serializeModel(modelWith({ content: { vectors: sparse, dims: 256 } })));
    const loaded = (back as unknown as { content: { vectors: Float32Array } }).content.vectors;
    const expected = Uint32Array.from(sparse.keys()).filter((i) => sparse[i] !== 0);
    expect(nonZeroPositions(loaded)).toEqual(expected);
    expect(nonZeroPositions(sparse)).toBeUndefined();
    const viaPositions = sparseRows(loaded, 1000, 256);
    const viaScan = sparseRows(sparse, 1000, 256);
    expect(viaPositions).not.toBeNull();
    expect(viaPositions).toEqual(viaScan);
    expect(viaScan!.indptr[1000]).toBe(expected.length);
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
