import { describe, expect, test } from "bun:test";
import { buildAnnIndex, denseRows } from "../../src/engine";
import { foldInUser } from "../../src/engine/fold-in";
import { createRng, gaussian } from "../../src/engine/rng";
import { annTopAsync, annTopFoldedAsync } from "../../src/modules/recommendations/serving/ann-access";

describe("a search that folds the user in on the pool's thread (annTopFoldedAsync)", () => {
  const k = 16;
  const rng = createRng(21);
  const factors = Float32Array.from({ length: 800 * k }, () => gaussian(rng));
  const gram = new Float64Array(k * k);
  for (let i = 0; i < 800; i++) {
    for (let a = 0; a < k; a++)
      for (let b = 0; b < k; b++) gram[a * k + b]! += factors[i * k + a]! * factors[i * k + b]!;
  }
  const basis = { k, itemFactors: factors, itemGram: gram, alpha: 5, regularization: 0.1 };
  const ix = buildAnnIndex(denseRows(factors, k), "ip");
  const history = { items: Int32Array.of(3, 50, 700), weights: Float32Array.of(1, 2.5, 4) };

  test("answers the vector foldInUser solves and the neighbours annTopAsync finds for it", async () => {
    const folded = await annTopFoldedAsync(ix, basis, history, 30, 0)!;
    const vector = foldInUser(basis, history);
    expect(folded.vector).toEqual(vector);
    expect(folded.found).toEqual(await annTopAsync(ix, vector, 30, 0));
  });

  test("a fold-in the index refuses fails as a failed search does, never by throwing", async () => {
    const refused = annTopFoldedAsync(ix, { ...basis, itemGram: new Float64Array(k) }, history, 30, 0);
    expect(refused).toBeInstanceOf(Promise);
    let error: unknown;
    await refused!.catch((e: unknown) => {
      error = e;
    });
    expect(String(error)).toMatch(/Gram matrix/);
    // Factors of another length than the index's points: the caller folds in itself.
    expect(annTopFoldedAsync(ix, { ...basis, k: k + 1 }, history, 30, 0)).toBeNull();
  });
});
