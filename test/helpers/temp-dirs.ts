import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** Temporary directories made for test services still running; test/setup.ts removes them after the run. */
const open = new Set<string>();

export function trackTempDir(dir: string): void {
  open.add(dir);
}

export function removeTempDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
  open.delete(dir);
}

export function removeTrackedTempDirs(): void {
  for (const dir of open) removeTempDir(dir);
}

/** A new directory under the system's temporary directory, removed after the run. */
export function makeTempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  trackTempDir(dir);
  return dir;
}
