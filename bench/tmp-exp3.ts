import { easeEligibleItems, easeFromGram, easeScores } from "../src/engine/ease";
import { chooseMinSupport } from "../src/engine/fit";
import { evaluateRanking, heldOutSets, holdoutSplit } from "../src/engine/evaluate";
import { buildWeightedMatrix, selectEvents } from "../src/engine/weighting";
import type { Csr } from "../src/engine/sparse";
import { loadRealDataset } from "./data/loaders";
const name = process.argv[2] as any;
const grid = (process.argv[3] ?? "200:0").split(",").map((s) => s.split(":").map(Number));
const target = Number(process.argv[4] ?? 3000);
const ds = loadRealDataset("/work/shared/datasets", name);
const parts = holdoutSplit(ds.events, { seed: 42 });
const train = buildWeightedMatrix(selectEvents(ds.events, parts.trainIdx));
const held = heldOutSets(ds.events, parts, train);
const cs = chooseMinSupport(train, target, 1);
process.stderr.write(`${name} items ${train.nCols} users ${train.nRows} -> minSupport ${cs.minSupport} items ${cs.items}\n`);
const items = easeEligibleItems(train, cs.minSupport);
function gram(ui: Csr, items: Int32Array, alpha: number) {
  const m = items.length;
  const compact = new Int32Array(ui.nCols).fill(-1);
  for (let j = 0; j < m; j++) compact[items[j]!] = j;
  const g = new Float64Array(m * m);
  const rowIdx = new Int32Array(ui.nCols);
  let total = 0, nu = 0;
  for (let u = 0; u < ui.nRows; u++) {
    let len = 0;
    for (let p = ui.indptr[u]!; p < ui.indptr[u + 1]!; p++) { const c = compact[ui.indices[p]!]!; if (c >= 0) rowIdx[len++] = c; }
    if (len === 0) continue;
    const w = (ui.indptr[u + 1]! - ui.indptr[u]!) ** -alpha;
    total += w; nu++;
    for (let x = 0; x < len; x++) { const ro = rowIdx[x]! * m; for (let y = 0; y < len; y++) g[ro + rowIdx[y]!]! += w; }
  }
  // keep the overall scale (mean user weight 1) so λ means the same
  const s = nu / total;
  for (let i = 0; i < g.length; i++) g[i]! *= s;
  return g;
}
const ones = new Float32Array(train.nCols).fill(1);
for (const [lambda, alpha] of grid) {
  const g = gram(train, items, alpha!);
  const ease = easeFromGram(g, items, train.nCols, { lambda: lambda!, keepPerRow: 0, native: true });
  const r = evaluateRanking(train, held, (u, out) => easeScores(ease, train.indices.subarray(train.indptr[u]!, train.indptr[u + 1]!), ones, out));
  process.stderr.write(`lambda=${lambda} alpha=${alpha} ndcg=${r.ndcgAt10!.toFixed(4)} recall=${r.recallAt20!.toFixed(4)}\n`);
}
