import { expect, test } from "bun:test";
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const nativeModule = join(import.meta.dir, "../../src/engine/native.ts");

/**
 * Runs a script in a process of its own whose TMPDIR (where the kernels' library is cached) is a fresh
 * directory; returns what it printed and the library files it left there.
 */
function runWithFreshTmp(script: string): {
  exitCode: number;
  stdout: string;
  stderr: string;
  libraries: string[];
} {
  const dir = mkdtempSync(join(tmpdir(), "native-build-"));
  try {
    const res = Bun.spawnSync(
      [process.execPath, "-e", `const n = await import(${JSON.stringify(nativeModule)});\n${script}`],
      { env: { ...process.env, TMPDIR: dir }, stdout: "pipe", stderr: "pipe" },
    );
    const cache = join(dir, "recsys-native");
    const libraries = existsSync(cache)
      ? readdirSync(cache).filter((f) => /^kernels-[0-9a-f]{16}\.so$/.test(f))
      : [];
    return {
      exitCode: res.exitCode,
      stdout: res.stdout.toString(),
      stderr: res.stderr.toString(),
      libraries,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test("start-up builds the kernels' library ahead of use: the first use only loads it", () => {
  // Built with the real compiler, then loaded with one that cannot compile: only a library already on disk
  // can make the second call succeed.
  const r = runWithFreshTmp(
    `n.configureNativeKernels({ enabled: true, compiler: "cc" });
     await n.buildNativeKernels();
     n.configureNativeKernels({ enabled: true, compiler: "false" });
     console.log(n.nativeKernels() === null ? "missing" : "loaded");`,
  );
  expect(r.stderr).toBe("");
  expect(r.stdout.trim()).toBe("loaded");
  expect(r.libraries.length).toBe(1);
});

test("without a working compiler the build fails quietly and the TypeScript twins serve", () => {
  const r = runWithFreshTmp(
    `n.configureNativeKernels({ enabled: true, compiler: "false" });
     await n.buildNativeKernels();
     console.log(n.nativeKernels() === null ? "twins" : "native");`,
  );
  expect(r.exitCode).toBe(0);
  expect(r.stdout.trim()).toBe("twins");
});
