import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { RunResult } from "./types";

export function writeRunResult(dir: string, run: RunResult): string {
  mkdirSync(dir, { recursive: true });
  const stamp = run.startedAt.replace(/[:.]/g, "-");
  const file = join(dir, `${stamp}-${run.machine.gitCommit}.json`);
  writeFileSync(file, `${JSON.stringify(run, null, 2)}\n`);
  return file;
}

export function readRunResult(file: string): RunResult {
  const run = JSON.parse(readFileSync(file, "utf8")) as RunResult;
  if (run.format !== 1 || !Array.isArray(run.parts)) throw new Error(`${file} is not a bench result file`);
  return run;
}
