/**
 * `bun run build` (in clients/js): dist/index.js, one ESM file with no dependencies for Bun, Node 20+ and
 * browsers, and dist/*.d.ts from tsc. The service's tests build it the same way (`buildClient`).
 */
import { resolve } from "node:path";

const root = import.meta.dir;

export async function buildClient(outdir = resolve(root, "dist")): Promise<string> {
  const result = await Bun.build({
    entrypoints: [resolve(root, "src/index.ts")],
    outdir,
    target: "browser",
    format: "esm",
    minify: false,
  });
  if (!result.success) throw new Error(result.logs.map(String).join("\n"));
  return resolve(outdir, "index.js");
}

if (import.meta.main) {
  const js = await buildClient();
  const tsc = Bun.spawnSync(["tsc", "-p", resolve(root, "tsconfig.json")], {
    cwd: root,
    stdout: "inherit",
    stderr: "inherit",
  });
  if (tsc.exitCode !== 0) process.exit(tsc.exitCode ?? 1);
  console.log(`built ${js} and its declarations`);
}
