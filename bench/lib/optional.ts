import { existsSync } from "node:fs";
import { join } from "node:path";
import { NotAvailable } from "./types";

/**
 * Loads an export from the first of several candidate modules that has it, so a part can measure code that
 * other engineers are still building and say exactly what is missing instead of crashing.
 */
export async function importExport<T>(
  repoRoot: string,
  candidates: string[],
  exportName: string,
): Promise<T> {
  const present = candidates.filter((c) => existsSync(join(repoRoot, c)));
  for (const file of present) {
    const mod = (await import(join(repoRoot, file))) as Record<string, unknown>;
    if (mod[exportName] !== undefined) return mod[exportName] as T;
  }
  throw new NotAvailable(
    present.length === 0
      ? `${candidates.join(" / ")} not found`
      : `${present.join(" / ")} does not export ${exportName}`,
  );
}

/** Same as importExport, but null instead of throwing. */
export async function tryImportExport<T>(
  repoRoot: string,
  candidates: string[],
  exportName: string,
): Promise<T | null> {
  try {
    return await importExport<T>(repoRoot, candidates, exportName);
  } catch (error) {
    if (error instanceof NotAvailable) return null;
    throw error;
  }
}
