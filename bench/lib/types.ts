/** Shapes shared by the bench runner, its parts and the result files. */

export const PART_NAMES = ["quality", "training", "ingestion", "serving", "memory", "micro"] as const;
export type PartName = (typeof PART_NAMES)[number];

/** smoke: seconds, for the test that keeps the bench alive; default: a few minutes; full: the large sizes. */
export type BenchSize = "smoke" | "default" | "full";

export type Cell = string | number | null;

/** An aligned text table; every measured column sits next to its baseline and their ratio. */
export interface Table {
  title: string;
  columns: string[];
  rows: Cell[][];
  notes?: string[];
}

/** One comparable number; `key` is stable across runs so `bench:compare` can line runs up. */
export interface Figure {
  key: string;
  value: number;
  unit: string;
  /** Which direction is an improvement, for the sign of deltas in comparisons. */
  better: "higher" | "lower";
}

export interface PartOutput {
  tables: Table[];
  figures: Figure[];
  notes?: string[];
}

export interface PartResult extends PartOutput {
  name: PartName;
  status: "ok" | "skipped" | "failed";
  reason?: string;
  seconds: number;
  /** 1, 5 and 15 minute load averages when the part started: this machine is shared, so say how busy it was. */
  loadAverage?: number[];
}

export interface MachineInfo {
  cpuModel: string;
  cores: number;
  memoryBytes: number;
  platform: string;
  arch: string;
  kernel: string;
  bunVersion: string;
  gitCommit: string;
  gitDirty: boolean;
  date: string;
  /**
   * What the kernel takes to map a fresh page on first touch, in µs (see `pageFaultMicros`); null when it could
   * not be read. Absent from results saved before it was measured.
   */
  pageFaultMicros?: number | null;
}

export interface RunResult {
  format: 1;
  startedAt: string;
  finishedAt: string;
  command: string;
  size: BenchSize;
  machine: MachineInfo;
  parts: PartResult[];
}

export interface BenchContext {
  size: BenchSize;
  repoRoot: string;
  datasetsDir: string;
  /** Server URL for creating and dropping throw-away databases. */
  postgresAdminUrl: string;
  /** The store of the service the part starts (`--postgres`), for parts that measure one store at a time. */
  store: "pglite" | "postgres";
  /** `--split`: the quality part's hold-out. */
  split: "random" | "hash";
  log(message: string): void;
}

export interface BenchPart {
  name: PartName;
  description: string;
  run(ctx: BenchContext): Promise<PartOutput>;
}

/** Thrown (or returned in rows) when a module or route the part measures has not been built yet. */
export class NotAvailable extends Error {
  constructor(reason: string) {
    super(`not available yet: ${reason}`);
    this.name = "NotAvailable";
  }
}
