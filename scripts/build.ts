/**
 * `bun run build`: one self-contained executable at dist/recommendation-service. It embeds the code, the
 * SQL migrations (text imports), PGlite's wasm and data files (file imports in src/db/pglite-assets.ts),
 * the hnswlib-node addon (required by path in src/shared/hnswlib.ts) and the C kernels' source, which is
 * compiled with the machine's `cc` on first use when one exists (the TypeScript kernels run otherwise),
 * the training worker (src/worker.ts), the snapshot decoding worker (src/decode-worker.ts), the embedded
 * database's thread (src/pglite-worker.ts), the shop
 * widget served as /widget.js (see `buildWidget`) and the operator's dashboard (src/web/dashboard, bundled
 * by Bun.build and embedded as one gzipped file that src/modules/dashboard/assets.ts reads back).
 * Usage: bun run build [--outfile path] [--target bun-linux-x64|bun-linux-arm64|…]
 */
import { mkdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { gzipSync } from "node:zlib";
import { bundleDashboard, EMBEDDED_BUNDLE_PREFIX, gzippedSize } from "../src/web/dashboard/bundle";
import { bundleWidget } from "../src/web/widget/bundle";

const root = resolve(import.meta.dir, "..");
const args = process.argv.slice(2);
const option = (name: string): string | undefined => {
  const at = args.indexOf(name);
  return at >= 0 ? args[at + 1] : undefined;
};
const outfile = resolve(root, option("--outfile") ?? "dist/recommendation-service");
const target = option("--target");
if (target !== undefined && !/^bun-(linux|darwin|windows)-(x64|arm64)/.test(target)) {
  console.error(`unknown --target ${target}`);
  process.exit(2);
}

/** A shop page loads the widget: it must stay small (under 15 KB gzipped), so each build prints its size. */
const WIDGET_GZIP_BUDGET = 15 * 1024;

/**
 * Bundles the widget (minified) and hands it to the compiler as the WIDGET_BUNDLE constant, which
 * src/modules/widget/script.ts serves instead of bundling from source (the binary has no source tree).
 */
async function buildWidget(): Promise<string[]> {
  const widget = await bundleWidget();
  const kb = (bytes: number) => (bytes / 1024).toFixed(1);
  console.log(`widget.js: ${kb(widget.js.length)} KB minified, ${kb(widget.gzipBytes)} KB gzipped`);
  if (widget.gzipBytes > WIDGET_GZIP_BUDGET) {
    console.error(`widget.js is over its budget of ${kb(WIDGET_GZIP_BUDGET)} KB gzipped`);
    process.exit(1);
  }
  return ["--define", `WIDGET_BUNDLE=${JSON.stringify(widget.js)}`];
}

/** The dashboard's gzipped script and stylesheet may not exceed this (the budget). */
const DASHBOARD_BUDGET_BYTES = 300 * 1024;

/**
 * Bundles the dashboard and writes it as one gzipped JSON file, to be passed to `bun build --compile` as an
 * extra entry: a file that is not code is embedded as it is, and the service finds it among
 * `Bun.embeddedFiles` by its name. It is written under src/ because the entries' common directory is the
 * executable's root, where the main bundle looks for the worker. Answers the path (removed after the build).
 */
async function bundleDashboardForEmbedding(): Promise<string> {
  const files = await bundleDashboard();
  const size = gzippedSize(files);
  const kilobytes = (size / 1024).toFixed(1);
  console.log(`dashboard bundle: ${kilobytes} KB gzipped (script and stylesheet; budget 300 KB)`);
  if (size > DASHBOARD_BUDGET_BYTES) {
    console.error(`the dashboard bundle is over its budget: ${kilobytes} KB > 300 KB gzipped`);
    process.exit(1);
  }
  const path = resolve(root, "src/web/dashboard", `${EMBEDDED_BUNDLE_PREFIX}-${process.pid}.gz`);
  writeFileSync(path, gzipSync(JSON.stringify(files)));
  return path;
}

mkdirSync(dirname(outfile), { recursive: true });
const started = performance.now();
const widgetDefines = await buildWidget();
const dashboardBundle = await bundleDashboardForEmbedding();
const command = [
  process.execPath,
  "build",
  "--compile",
  // Identifiers stay readable so stack traces in the logs still name functions.
  "--minify-syntax",
  "--minify-whitespace",
  "--sourcemap",
  ...widgetDefines,
  ...(target === undefined ? [] : ["--target", target]),
  "--outfile",
  outfile,
  resolve(root, "src/main.ts"),
  // The training worker: a second entry point, embedded where the main bundle's worker URL points.
  resolve(root, "src/worker.ts"),
  // The snapshot decoding worker, likewise.
  resolve(root, "src/decode-worker.ts"),
  // The embedded database's thread, likewise.
  resolve(root, "src/pglite-worker.ts"),
  dashboardBundle,
];
const build = Bun.spawnSync(command, { cwd: root, stdout: "inherit", stderr: "inherit" });
rmSync(dashboardBundle, { force: true });
if (build.exitCode !== 0) {
  console.error(`bun build --compile failed (exit ${build.exitCode})`);
  process.exit(build.exitCode ?? 1);
}
const megabytes = (statSync(outfile).size / 1024 / 1024).toFixed(1);
const seconds = ((performance.now() - started) / 1000).toFixed(1);
console.log(`built ${outfile} (${megabytes} MB) in ${seconds} s`);
