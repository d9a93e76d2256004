/**
 * Build glue for the single executable. `bun build --compile` bundles all of src/main.ts into the binary's
 * root file, so `new URL("./worker.ts", import.meta.url)` in src/training/train-in-worker.ts points at
 * /$bunfs/root/worker.ts inside the binary; scripts/build.ts compiles this file as a second entry point,
 * which lands exactly there and runs the training worker. Under `bun run` this file is unused.
 */
import "./training/worker";
