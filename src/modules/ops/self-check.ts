/**
 * `recommendation-service --self-check`: proves on a new machine that the parts a single binary carries
 * inside itself work there — the embedded database, the hnswlib addon, the C kernels (or their TypeScript
 * fallback) — without opening a port or touching DATA_DIR. Prints one JSON object; exits 1 on a failure.
 */
import { sql } from "drizzle-orm";
import { openDatabase } from "../../db/client";
import { migrate } from "../../db/migrate";
import { configureNativeKernels, type NativeKernelSettings, nativeKernels } from "../../engine/native";
import { HierarchicalNSW } from "../../shared/hnswlib";

interface CheckOutcome {
  ok: boolean;
  detail: string;
}

async function attempt(run: () => Promise<string> | string): Promise<CheckOutcome> {
  try {
    return { ok: true, detail: await run() };
  } catch (error) {
    return { ok: false, detail: (error as Error).message };
  }
}

export async function runSelfCheck(
  native: NativeKernelSettings,
): Promise<{ ok: boolean; checks: Record<string, CheckOutcome> }> {
  configureNativeKernels(native);
  const checks: Record<string, CheckOutcome> = {
    database: await attempt(async () => {
      const database = await openDatabase({ dataDir: "memory://" });
      try {
        const applied = await migrate(database);
        const [row] = await database.rows<{ version: string }>(sql`select version() as version`);
        return `embedded PGlite (${row?.version.split(" on ")[0]}), ${applied.length} migrations applied`;
      } finally {
        await database.close();
      }
    }),
    hnswlib: await attempt(() => {
      const index = new HierarchicalNSW("ip", 2);
      index.initIndex(4);
      index.addPoint([1, 0], 7);
      const { neighbors } = index.searchKnn([1, 0], 1);
      if (neighbors[0] !== 7) throw new Error(`nearest neighbour was ${neighbors[0]}, expected 7`);
      return "addon loaded, index answers";
    }),
    // Optional by design: without a C compiler the TypeScript kernels do the same work, slower.
    nativeKernels: await attempt(() =>
      nativeKernels() === null
        ? "not available (no C compiler or loader): TypeScript kernels in use"
        : "compiled and loaded",
    ),
  };
  return { ok: Object.values(checks).every((check) => check.ok), checks };
}
