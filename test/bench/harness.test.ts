/** The bench's pure pieces: argument parsing, table rendering, ratios, quality rows and run comparison. */
import { describe, expect, test } from "bun:test";
import { compareRuns, delta } from "../../bench/compare";
import { parseArgs } from "../../bench/lib/args";
import { describeMachine, pageFaultMicros } from "../../bench/lib/machine";
import { ratio, renderTable } from "../../bench/lib/table";
import type { RunResult } from "../../bench/lib/types";
import { qualityOutput } from "../../bench/parts/quality";

describe("bench arguments", () => {
  test("no part names means every part in order; --full and --datasets are honoured", () => {
    const args = parseArgs(["--full", "--datasets", "/data/sets"], "/repo", {});
    expect(args.parts).toEqual(["quality", "training", "ingestion", "serving", "memory", "micro"]);
    expect(args.size).toBe("full");
    expect(args.datasetsDir).toBe("/data/sets");
    expect(args.resultsDir).toBe("/repo/bench/results");
  });

  test("the data set folder defaults to ../shared/datasets or BENCH_DATASETS_DIR", () => {
    expect(parseArgs([], "/repo", {}).datasetsDir).toBe("/shared/datasets");
    expect(parseArgs([], "/repo", { BENCH_DATASETS_DIR: "/x" }).datasetsDir).toBe("/x");
  });

  test("named parts run alone, and an unknown argument is refused with the usage", () => {
    expect(parseArgs(["serving", "--smoke"], "/repo", {}).parts).toEqual(["serving"]);
    expect(() => parseArgs(["servng"], "/repo", {})).toThrow(/unknown argument "servng"[\s\S]*Usage/);
  });
});

describe("bench tables", () => {
  test("columns are aligned: text left, numbers right", () => {
    const text = renderTable({
      title: "t",
      columns: ["name", "value"],
      rows: [
        ["a", 1.5],
        ["longer", 1234],
      ],
    });
    const lines = text.split("\n");
    expect(lines[0]).toBe("## t");
    expect(lines[3]).toBe("a        1.50");
    expect(lines[4]).toBe("longer  1,234");
  });

  test("a ratio is value over baseline, and missing or zero baselines print a dash", () => {
    expect(ratio(5, 10)).toBe("0.50x");
    expect(ratio(5, 0)).toBe("-");
    expect(ratio(null, 3)).toBe("-");
  });

  test("quality rows are printed next to EASE and popularity of the same data set", () => {
    const base = { recallAt20: 0.3, coverageAt10: 0.1, fitSeconds: 1, evaluatedUsers: 10 };
    const out = qualityOutput([
      { dataset: "d", model: "popularity", ndcgAt10: 0.1, ...base },
      { dataset: "d", model: "ease-l200", ndcgAt10: 0.4, ...base },
      { dataset: "d", model: "production", ndcgAt10: 0.44, ...base },
    ]);
    const production = out.tables[0]!.rows[2]!;
    expect(production.slice(0, 5)).toEqual(["d", "production", 0.44, "1.10x", "4.40x"]);
    expect(out.figures.find((f) => f.key === "quality.d.production.ndcgAt10")?.value).toBe(0.44);
  });
});

describe("bench compare", () => {
  test("a change is signed and judged by the figure's direction", () => {
    expect(delta(100, 120, "higher")).toBe("+20.0% better");
    expect(delta(100, 120, "lower")).toBe("+20.0% worse");
    expect(delta(100, 101, "lower")).toBe("+1.0%");
  });

  test("two runs are lined up figure by figure", () => {
    const machine = {
      cpuModel: "cpu",
      cores: 2,
      memoryBytes: 2 ** 30,
      platform: "linux",
      arch: "x64",
      kernel: "6",
      bunVersion: "1",
      gitCommit: "abc",
      gitDirty: false,
      date: "2020-01-01T00:00:00Z",
    };
    const run = (rps: number): RunResult => ({
      format: 1,
      startedAt: "2020-01-01T00:00:00Z",
      finishedAt: "2020-01-01T00:01:00Z",
      command: "bun run bench serving",
      size: "default",
      machine,
      parts: [
        {
          name: "serving",
          status: "ok",
          seconds: 1,
          tables: [],
          figures: [{ key: "serving.health.rps", value: rps, unit: "req/s", better: "higher" }],
        },
      ],
    });
    const text = compareRuns(run(1000), run(1500));
    expect(text).toContain("health.rps");
    expect(text).toMatch(/1,000\s+1,500\s+\+50\.0% better/);
    // A run saved before the page fault was measured is described without it.
    expect(text).not.toContain("page fault");
    expect(describeMachine({ ...machine, pageFaultMicros: 11.46 })).toEndWith(", page fault 11.5 µs");
  });
});

describe("the machine's page fault", () => {
  test.skipIf(process.platform !== "linux")("is read from pages this process touches first", () => {
    const before = process.resourceUsage().minorPageFault;
    const micros = pageFaultMicros();
    // A figure is given only from a round in which at least half of its 4,096 pages faulted.
    expect(process.resourceUsage().minorPageFault - before).toBeGreaterThanOrEqual(2048);
    expect(micros).not.toBeNull();
    expect(micros!).toBeGreaterThan(0);
    expect(micros!).toBeLessThan(10_000);
  });
});
