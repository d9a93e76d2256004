/**
 * Build glue for the single executable, as src/worker.ts is for training: `new URL("./pglite-worker.ts",
 * import.meta.url)` in src/db/pglite-remote.ts points at /$bunfs/root/pglite-worker.ts inside the binary;
 * scripts/build.ts compiles this file as another entry point, which lands exactly there and runs the
 * embedded database's thread. Under `bun run` this file is unused.
 */
import "./db/pglite-worker";
