import { dlopen, FFIType } from "bun:ffi";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, renameSync, writeFileSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import kernelSource from "../../native/kernels.c" with { type: "text" };
import scoringSource from "../../native/scoring.c" with { type: "text" };

const symbols = {
  kernels_version: { args: [], returns: FFIType.i32 },
  kernels_set_threads: { args: [FFIType.i32], returns: FFIType.void },
  cholesky_f64: { args: [FFIType.ptr, FFIType.i32], returns: FFIType.i32 },
  spd_inverse_f64: { args: [FFIType.ptr, FFIType.i32], returns: FFIType.i32 },
  als_cg_sweep: {
    args: [
      FFIType.ptr,
      FFIType.ptr,
      FFIType.ptr,
      FFIType.i32,
      FFIType.ptr,
      FFIType.ptr,
      FFIType.ptr,
      FFIType.i32,
      FFIType.f64,
      FFIType.f64,
      FFIType.i32,
    ],
    returns: FFIType.void,
  },
  fold_in_f32: {
    args: [
      FFIType.ptr,
      FFIType.i32,
      FFIType.ptr,
      FFIType.ptr,
      FFIType.i32,
      FFIType.ptr,
      FFIType.i32,
      FFIType.f64,
      FFIType.f64,
      FFIType.ptr,
    ],
    returns: FFIType.i32,
  },
  rows_dot_f32: {
    args: [FFIType.ptr, FFIType.i32, FFIType.i32, FFIType.ptr, FFIType.i32, FFIType.ptr, FFIType.ptr],
    returns: FFIType.i32,
  },
  csr_rows_dot_f32: {
    args: [
      FFIType.ptr,
      FFIType.ptr,
      FFIType.ptr,
      FFIType.i32,
      FFIType.ptr,
      FFIType.i32,
      FFIType.ptr,
      FFIType.ptr,
    ],
    returns: FFIType.i32,
  },
} as const;

export type NativeKernels = ReturnType<typeof dlopen<typeof symbols>>["symbols"];

/** Whether to use the C kernels at all, and the compiler that builds them (Config.nativeKernels). */
export interface NativeKernelSettings {
  /** False (RECSYS_NATIVE=0): the TypeScript twins only (same results, slower); no compiler is run. */
  readonly enabled: boolean;
  /** The C compiler (CC), run once per kernel source and CPU. */
  readonly compiler: string;
}

let settings: NativeKernelSettings = { enabled: true, compiler: "cc" };
let cached: NativeKernels | null | undefined;
/** The file `cached` was loaded from. */
let loadedFrom: string | null = null;

/**
 * Sets how this thread gets its kernels, before its first fit or fold-in: createDeps passes the config's
 * settings on the main thread, the training worker those of its start message. The kernels are reached from
 * deep inside the engine's loops, so the settings are held per thread rather than passed to each call. A
 * thread that never calls this (a test or bench using the engine directly) compiles with `cc`.
 */
export function configureNativeKernels(next: NativeKernelSettings): void {
  if (next.enabled === settings.enabled && next.compiler === settings.compiler) return;
  settings = { enabled: next.enabled, compiler: next.compiler };
  cached = undefined;
  loadedFrom = null;
}

const FLAGS = ["-O3", "-march=native", "-shared", "-fPIC"];

/**
 * Where the library for these sources, flags and CPU lives (`$TMPDIR/recsys-native`), and the compiler
 * command that builds it under a private name (`tmp`), renamed into place once whole so that concurrent
 * builders (the training worker, another process) never load a half-written file.
 */
function libraryTarget(): { lib: string; tmp: string; command: () => string[] } {
  const key = createHash("sha256")
    .update(kernelSource)
    .update(scoringSource)
    .update(FLAGS.join(" "))
    .update(cpus()[0]?.model ?? "")
    .update(process.arch)
    .digest("hex")
    .slice(0, 16);
  const dir = join(tmpdir(), "recsys-native");
  const lib = join(dir, `kernels-${key}.so`);
  const tmp = `${lib}.${process.pid}.${Math.random().toString(36).slice(2)}`;
  return {
    lib,
    tmp,
    command: () => {
      mkdirSync(dir, { recursive: true });
      const src = join(dir, `kernels-${key}.c`);
      writeFileSync(src, kernelSource);
      const scoring = join(dir, `scoring-${key}.c`);
      writeFileSync(scoring, scoringSource);
      return [settings.compiler, ...FLAGS, "-o", tmp, src, scoring, "-lm", "-lpthread"];
    },
  };
}

/**
 * Builds the library off this thread if it is not there yet (about a second of compiler time, once per
 * source version and CPU), so that the first fold-in or ranking after an install or upgrade only loads it
 * instead of waiting for the compiler. Start-up awaits it alongside opening the database. Failing quietly:
 * `nativeKernels` then tries once more and falls back to the TypeScript twins.
 */
export async function buildNativeKernels(): Promise<void> {
  if (!settings.enabled || cached !== undefined) return;
  try {
    const target = libraryTarget();
    if (existsSync(target.lib)) return;
    const proc = Bun.spawn(target.command(), { stdout: "ignore", stderr: "ignore" });
    if ((await proc.exited) === 0) renameSync(target.tmp, target.lib);
  } catch {
    // No compiler here: the TypeScript twins serve.
  }
}

/**
 * Loads native/kernels.c and native/scoring.c, compiling them first when `buildNativeKernels` has not.
 * Returns null when no C compiler or loader is available, in which case callers use their TypeScript twins.
 */
export function nativeKernels(): NativeKernels | null {
  if (!settings.enabled) return null;
  if (cached !== undefined) return cached;
  cached = null;
  try {
    const target = libraryTarget();
    if (!existsSync(target.lib)) {
      const res = Bun.spawnSync(target.command(), { stderr: "pipe" });
      if (res.exitCode !== 0) return null;
      renameSync(target.tmp, target.lib);
    }
    const handle = dlopen(target.lib, symbols);
    handle.symbols.kernels_set_threads(Math.max(1, Math.min(cpus().length, 8)));
    cached = handle.symbols;
    loadedFrom = target.lib;
  } catch {
    cached = null;
  }
  return cached;
}

/**
 * The file the kernels were loaded from, loading them first; null when they are not (no compiler, or
 * RECSYS_NATIVE=0). Native code of another library can take a kernel from it by name (ann-access.ts).
 */
export function nativeKernelsLibrary(): string | null {
  return nativeKernels() === null ? null : loadedFrom;
}
