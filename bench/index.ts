/**
 * `bun run bench [part ...] [--full | --smoke] [--datasets <dir>]`: runs the benchmark parts, prints each
 * figure next to a baseline measured in the same run, and writes bench/results/<time>-<commit>.json.
 */
import { loadavg } from "node:os";
import { dirname, join, relative } from "node:path";
import { parseArgs, USAGE } from "./lib/args";
import { describeMachine, machineInfo } from "./lib/machine";
import { writeRunResult } from "./lib/results";
import { renderTable } from "./lib/table";
import {
  type BenchContext,
  type BenchPart,
  NotAvailable,
  type PartResult,
  type RunResult,
} from "./lib/types";
import { ingestionPart } from "./parts/ingestion";
import { memoryPart } from "./parts/memory";
import { microPart } from "./parts/micro";
import { qualityPart } from "./parts/quality";
import { servingPart } from "./parts/serving";
import { trainingPart } from "./parts/training";

const PARTS: BenchPart[] = [qualityPart, trainingPart, ingestionPart, servingPart, memoryPart, microPart];

async function main(): Promise<number> {
  const repoRoot = join(dirname(import.meta.path), "..");
  let args: ReturnType<typeof parseArgs>;
  try {
    args = parseArgs(process.argv.slice(2), repoRoot);
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n`);
    return 2;
  }
  if (args.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const machine = machineInfo(repoRoot);
  const startedAt = new Date().toISOString();
  const out = (s: string) => process.stdout.write(`${s}\n`);
  out(`# Benchmark (${args.size}) — ${describeMachine(machine, true)}`);
  out(`# parts: ${args.parts.join(", ")}; data sets: ${args.datasetsDir}`);

  const results: PartResult[] = [];
  for (const name of args.parts) {
    const part = PARTS.find((p) => p.name === name)!;
    const started = performance.now();
    const ctx: BenchContext = {
      size: args.size,
      repoRoot,
      datasetsDir: args.datasetsDir,
      postgresAdminUrl: args.postgresAdminUrl,
      store: args.store,
      split: args.split,
      log: (message) =>
        process.stderr.write(
          `  [${name} +${((performance.now() - started) / 1000).toFixed(1)}s] ${message}\n`,
        ),
    };
    const load = loadavg().map((x) => Math.round(x * 100) / 100);
    out(`\n# ${name}: ${part.description} (load average ${load.join(" ")} on ${machine.cores} cores)`);
    let result: PartResult;
    try {
      const output = await part.run(ctx);
      result = { name, status: "ok", seconds: 0, ...output };
    } catch (error) {
      const skipped = error instanceof NotAvailable;
      const reason = skipped ? (error as Error).message : `failed: ${(error as Error).stack ?? error}`;
      result = {
        name,
        status: skipped ? "skipped" : "failed",
        reason,
        seconds: 0,
        tables: [{ title: name, columns: ["status"], rows: [[reason.split("\n")[0]!]] }],
        figures: [],
      };
      if (!skipped) process.stderr.write(`${reason}\n`);
    }
    result.seconds = Math.round((performance.now() - started) / 100) / 10;
    result.loadAverage = load;
    results.push(result);
    for (const table of result.tables) out(`\n${renderTable(table)}`);
    for (const note of result.notes ?? []) out(`  note: ${note}`);
    out(`  (${name}: ${result.status}, ${result.seconds} s)`);
  }

  const run: RunResult = {
    format: 1,
    startedAt,
    finishedAt: new Date().toISOString(),
    command: `bun run bench ${process.argv.slice(2).join(" ")}`.trim(),
    size: args.size,
    machine,
    parts: results,
  };
  const file = writeRunResult(args.resultsDir, run);
  out(`\nresult written to ${relative(process.cwd(), file) || file}`);
  const failed = results.filter((r) => r.status === "failed");
  if (failed.length > 0) out(`failed parts: ${failed.map((r) => r.name).join(", ")}`);
  return failed.length > 0 ? 1 : 0;
}

process.exitCode = await main();
// Parts may leave pooled sockets or worker handles behind; the run is over.
process.exit(process.exitCode);
