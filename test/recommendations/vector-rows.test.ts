import { expect, test } from "bun:test";
import { buildContentVectors } from "../../src/engine";
import { nativeKernels } from "../../src/engine/native";
import { createRng } from "../../src/engine/rng";
import { rowDot, rowsDot, sparseRowsDot } from "../../src/modules/recommendations/serving/vector-rows";

const rng = createRng(7);

function denseCase(nRows: number, dims: number) {
  const rows = Float32Array.from({ length: nRows * dims }, () => rng() - 0.5);
  const x = Float32Array.from({ length: dims }, () => rng() * 2 - 1);
  const items = Int32Array.from({ length: 300 }, () => Math.floor(rng() * nRows));
  return { rows, x, items };
}

test("the native kernels load here (CI has a C compiler)", () => {
  expect(nativeKernels()).not.toBeNull();
});

test("dense candidate scoring gives the same floats on both paths, for every width", () => {
  for (const dims of [64, 1, 3, 7, 17, 100]) {
    const { rows, x, items } = denseCase(500, dims);
    const native = new Float32Array(items.length).fill(Number.NaN);
    const plain = new Float32Array(items.length).fill(Number.NaN);
    rowsDot(rows, dims, items, x, native);
    rowsDot(rows, dims, items, x, plain, { native: false });
    expect(Array.from(native)).toEqual(Array.from(plain));
    for (let p = 0; p < items.length; p++) {
      expect(plain[p]).toBe(Math.fround(rowDot(x, 0, rows, items[p]! * dims, dims)));
    }
  }
});

test("rows that are a view into a larger buffer (a model read from its artifact) are read from the view's start", () => {
  const { rows, x, items } = denseCase(200, 16);
  const buffer = new Float32Array(rows.length + 40).fill(1e6);
  buffer.set(rows, 40);
  const view = buffer.subarray(40);
  const native = new Float32Array(items.length).fill(Number.NaN);
  const plain = new Float32Array(items.length).fill(Number.NaN);
  rowsDot(view, 16, items, x, native);
  rowsDot(rows, 16, items, x, plain, { native: false });
  expect(Array.from(native)).toEqual(Array.from(plain));
});

test("only the scores not known yet are computed", () => {
  const { rows, x, items } = denseCase(50, 16);
  for (const native of [true, false]) {
    const out = new Float32Array(items.length).fill(Number.NaN);
    out[0] = 42;
    out[5] = -1;
    rowsDot(rows, 16, items, x, out, { native });
    expect(out[0]).toBe(42);
    expect(out[5]).toBe(-1);
    expect(Number.isNaN(out[1]!)).toBe(false);
  }
});

test("sparse (content) candidate scoring gives the same floats on both paths", () => {
  const words = ["red", "blue", "shoe", "shirt", "wool", "cotton", "kids", "sale", "sport", "formal"];
  const items = Array.from({ length: 400 }, (_, i) => ({
    name: Array.from({ length: 1 + (i % 5) }, () => words[Math.floor(rng() * words.length)]).join(" "),
    categoryPath: `c${i % 7}`,
  }));
  const c = buildContentVectors(items, items.length, { dims: 64 });
  const profile = Float32Array.from({ length: c.dims }, () => rng());
  const picks = Int32Array.from({ length: 250 }, () => Math.floor(rng() * items.length));
  const native = new Float32Array(picks.length).fill(Number.NaN);
  const plain = new Float32Array(picks.length).fill(Number.NaN);
  native[3] = 7;
  plain[3] = 7;
  sparseRowsDot(c, picks, profile, native);
  sparseRowsDot(c, picks, profile, plain, { native: false });
  expect(Array.from(native)).toEqual(Array.from(plain));
  expect(native[3]).toBe(7);
  expect(native.some((v) => v !== 0)).toBe(true);
});
