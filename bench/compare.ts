/**
 * `bun run bench:compare A B`: two result files side by side, figure by figure, with the change from A to B.
 * A and B are paths, or any unique part of a file name under bench/results (e.g. a commit); "latest" and
 * "previous" name the two newest runs.
 */
import { existsSync, readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { describeMachine } from "./lib/machine";
import { readRunResult } from "./lib/results";
import { formatNumber, renderTable } from "./lib/table";
import type { Cell, Figure, RunResult } from "./lib/types";

const resultsDir = join(dirname(import.meta.path), "results");

function resolveRun(arg: string): string {
  if (existsSync(arg)) return arg;
  const files = existsSync(resultsDir)
    ? readdirSync(resultsDir)
        .filter((f) => f.endsWith(".json"))
        .sort()
    : [];
  if (arg === "latest" && files.length > 0) return join(resultsDir, files[files.length - 1]!);
  if (arg === "previous" && files.length > 1) return join(resultsDir, files[files.length - 2]!);
  const matches = files.filter((f) => f.includes(arg));
  if (matches.length === 1) return join(resultsDir, matches[0]!);
  throw new Error(
    matches.length === 0
      ? `no result file matches "${arg}" (looked in ${resultsDir})`
      : `"${arg}" matches several result files: ${matches.join(", ")}`,
  );
}

/** Change from A to B as a signed percentage, marked better/worse by the figure's direction. */
export function delta(a: number | undefined, b: number | undefined, better: Figure["better"]): string {
  if (a === undefined || b === undefined) return "";
  if (a === 0) return b === 0 ? "0%" : "new";
  const pct = ((b - a) / Math.abs(a)) * 100;
  const improved = better === "higher" ? pct > 0 : pct < 0;
  const mark = Math.abs(pct) < 2 ? "" : improved ? " better" : " worse";
  return `${pct >= 0 ? "+" : ""}${pct.toFixed(1)}%${mark}`;
}

export function compareRuns(a: RunResult, b: RunResult): string {
  const out = [`A: ${describeMachine(a.machine)}, ${a.startedAt}, ${a.command}`];
  out.push(`B: ${describeMachine(b.machine)}, ${b.startedAt}, ${b.command}`);
  const partNames = [...new Set([...a.parts, ...b.parts].map((p) => p.name))];
  for (const name of partNames) {
    const pa = a.parts.find((p) => p.name === name);
    const pb = b.parts.find((p) => p.name === name);
    const figA = new Map((pa?.figures ?? []).map((f) => [f.key, f]));
    const figB = new Map((pb?.figures ?? []).map((f) => [f.key, f]));
    const keys = [...new Set([...figA.keys(), ...figB.keys()])];
    const rows: Cell[][] = keys.map((key) => {
      const fa = figA.get(key);
      const fb = figB.get(key);
      const f = (fa ?? fb)!;
      return [
        key.replace(`${name}.`, ""),
        f.unit,
        fa ? formatNumber(fa.value) : "-",
        fb ? formatNumber(fb.value) : "-",
        delta(fa?.value, fb?.value, f.better),
      ];
    });
    const status = `A ${pa?.status ?? "absent"}, B ${pb?.status ?? "absent"}`;
    if (rows.length === 0) rows.push([`(no figures: ${status})`, "", "", "", ""]);
    out.push(
      "",
      renderTable({ title: `${name} (${status})`, columns: ["figure", "unit", "A", "B", "B vs A"], rows }),
    );
  }
  return out.join("\n");
}

if (import.meta.main) {
  const [argA, argB] = process.argv.slice(2);
  if (!argA || !argB) {
    process.stderr.write(
      "Usage: bun run bench:compare <A.json|name part|previous> <B.json|name part|latest>\n",
    );
    process.exit(2);
  }
  try {
    const a = readRunResult(resolveRun(argA));
    const b = readRunResult(resolveRun(argB));
    process.stdout.write(`${compareRuns(a, b)}\n`);
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n`);
    process.exit(1);
  }
}
