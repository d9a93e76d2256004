/**
 * Build glue for the single executable, as src/worker.ts is for training: `new URL("./decode-worker.ts",
 * import.meta.url)` in src/snapshots/decode-in-worker.ts points at /$bunfs/root/decode-worker.ts inside the
 * binary; scripts/build.ts compiles this file as another entry point, which lands exactly there and runs
 * the snapshot decoding worker. Under `bun run` this file is unused.
 */
import "./snapshots/decode-worker";
