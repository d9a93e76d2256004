import { isAbsolute, join, resolve } from "node:path";
import { type BenchSize, PART_NAMES, type PartName } from "./types";

export interface BenchArgs {
  parts: PartName[];
  size: BenchSize;
  datasetsDir: string;
  resultsDir: string;
  postgresAdminUrl: string;
  /** Parts that start the service run it on Postgres (`--postgres`) instead of the embedded store. */
  store: "pglite" | "postgres";
  /** How the quality part holds out test interactions: per-user random draw, or a hash of (user, item). */
  split: "random" | "hash";
  help: boolean;
}

export const USAGE = `Usage: bun run bench [part ...] [--full | --smoke] [--datasets <dir>] [--out <dir>]

Parts: ${PART_NAMES.join(", ")} (default: all, in that order)
  --full            the large sizes (10M-interaction training, 100k-product serving tenant, ...)
  --smoke           a tiny size that finishes in seconds (used by test/bench)
  --datasets <dir>  real data sets (default ../shared/datasets from the repo root, or BENCH_DATASETS_DIR)
  --out <dir>       where the JSON result goes (default bench/results)
  --postgres        parts that start the service (quality, training, serving) run it on Postgres, not the embedded store
  --split <kind>    quality: "random" per-user hold-out (default) or "hash" of (user, item), order-independent
Environment: BENCH_POSTGRES_URL (default postgres://postgres@127.0.0.1:5432/postgres) is the server on which
the bench creates and drops its throw-away databases.`;

export function parseArgs(argv: string[], repoRoot: string, env = process.env): BenchArgs {
  const parts: PartName[] = [];
  let size: BenchSize = "default";
  let datasetsDir = env["BENCH_DATASETS_DIR"] || join(repoRoot, "..", "shared", "datasets");
  let resultsDir = join(repoRoot, "bench", "results");
  let help = false;
  let store: BenchArgs["store"] = "pglite";
  let split: "random" | "hash" = "random";
  const abs = (p: string) => (isAbsolute(p) ? p : resolve(process.cwd(), p));
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const value = () => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${arg} needs a value\n\n${USAGE}`);
      return v;
    };
    if (arg === "--full") size = "full";
    else if (arg === "--smoke") size = "smoke";
    else if (arg === "--datasets") datasetsDir = abs(value());
    else if (arg.startsWith("--datasets=")) datasetsDir = abs(arg.slice("--datasets=".length));
    else if (arg === "--out") resultsDir = abs(value());
    else if (arg === "--postgres") store = "postgres";
    else if (arg === "--split") {
      const kind = value();
      if (kind !== "random" && kind !== "hash") throw new Error(`--split takes random or hash\n\n${USAGE}`);
      split = kind;
    } else if (arg === "--help" || arg === "-h") help = true;
    else if ((PART_NAMES as readonly string[]).includes(arg)) {
      if (!parts.includes(arg as PartName)) parts.push(arg as PartName);
    } else throw new Error(`unknown argument "${arg}"\n\n${USAGE}`);
  }
  return {
    parts: parts.length > 0 ? PART_NAMES.filter((p) => parts.includes(p)) : [...PART_NAMES],
    size,
    datasetsDir,
    resultsDir,
    postgresAdminUrl: env["BENCH_POSTGRES_URL"] || "postgres://postgres@127.0.0.1:5432/postgres",
    store,
    split,
    help,
  };
}

/** Picks the value for the run's size. */
export function bySize<T>(size: BenchSize, values: { smoke: T; default: T; full: T }): T {
  return values[size];
}
