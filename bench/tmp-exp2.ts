import { easeEligibleItems, easeFromGram, easeGram, easeScores } from "../src/engine/ease";
import { chooseMinSupport } from "../src/engine/fit";
import { evaluateRanking, heldOutSets, holdoutSplit } from "../src/engine/evaluate";
import { buildWeightedMatrix, selectEvents } from "../src/engine/weighting";
import { loadRealDataset } from "./data/loaders";
const name = process.argv[2] as any;
const grid = (process.argv[3] ?? "200:0").split(",").map((s) => s.split(":").map(Number));
const target = Number(process.argv[4] ?? 3000);
const ds = loadRealDataset("/work/shared/datasets", name);
const parts = holdoutSplit(ds.events, { seed: 42 });
const train = buildWeightedMatrix(selectEvents(ds.events, parts.trainIdx));
const held = heldOutSets(ds.events, parts, train);
const cs = chooseMinSupport(train, target, 1);
process.stderr.write(`${name} items ${train.nCols} -> minSupport ${cs.minSupport} items ${cs.items}\n`);
const items = easeEligibleItems(train, cs.minSupport);
const base = easeGram(train, items, "binary");
const m = items.length;
const ones = new Float32Array(train.nCols).fill(1);
for (const [lambda, c] of grid) {
  const g = base.slice();
  for (let j = 0; j < m; j++) g[j * m + j]! += c! * base[j * m + j]!;
  const ease = easeFromGram(g, items, train.nCols, { lambda: lambda!, keepPerRow: 0, native: true });
  const r = evaluateRanking(train, held, (u, out) => easeScores(ease, train.indices.subarray(train.indptr[u]!, train.indptr[u + 1]!), ones, out));
  process.stderr.write(`lambda=${lambda} c=${c} ndcg=${r.ndcgAt10!.toFixed(4)} recall=${r.recallAt20!.toFixed(4)}\n`);
}
