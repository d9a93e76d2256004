/**
 * The dashboard's files as the service serves them: one minified script, its stylesheet and the HTML
 * shell, bundled by Bun from src/web/dashboard/main.tsx. `bun run build` bundles them once and embeds them
 * in the executable (scripts/build.ts); a service started from source bundles them on the first request.
 */
import { gzipSync } from "node:zlib";

export interface DashboardFile {
  readonly contentType: string;
  readonly body: string;
}

/** Served under /dashboard/assets/<name>; `index.html` is the shell every dashboard path answers with. */
export type DashboardFiles = Readonly<Record<string, DashboardFile>>;

/** The name the bundle is embedded under (a gzipped JSON of DashboardFiles); see dashboard/assets.ts. */
export const EMBEDDED_BUNDLE_PREFIX = "rs-dashboard-bundle";

const ENTRY = new URL("./main.tsx", import.meta.url).pathname;

const shell = (script: string, stylesheet: string | undefined): string =>
  [
    "<!doctype html>",
    '<html lang="en">',
    "<head>",
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    '<meta name="color-scheme" content="light dark">',
    "<title>Recommendation Service · Dashboard</title>",
    // No icon file: without this line every browser asks for /favicon.ico and logs its 404.
    '<link rel="icon" href="data:,">',
    stylesheet === undefined ? "" : `<link rel="stylesheet" href="/dashboard/assets/${stylesheet}">`,
    "</head>",
    "<body>",
    '<div id="app"></div>',
    `<script type="module" src="/dashboard/assets/${script}"></script>`,
    "</body>",
    "</html>",
  ].join("\n");

export async function bundleDashboard(): Promise<DashboardFiles> {
  const result = await Bun.build({
    entrypoints: [ENTRY],
    target: "browser",
    format: "esm",
    minify: true,
    naming: { entry: "app-[hash].[ext]", asset: "[name]-[hash].[ext]" },
    define: { "process.env.NODE_ENV": '"production"' },
  });
  if (!result.success) {
    throw new AggregateError(result.logs, "the dashboard bundle did not build");
  }
  const files: Record<string, DashboardFile> = {};
  let script: string | undefined;
  let stylesheet: string | undefined;
  for (const output of result.outputs) {
    const name = output.path.replace(/^.*\//, "");
    const contentType = name.endsWith(".js")
      ? "text/javascript; charset=utf-8"
      : name.endsWith(".css")
        ? "text/css; charset=utf-8"
        : output.type;
    files[name] = { contentType, body: await output.text() };
    if (output.kind === "entry-point") script = name;
    else if (name.endsWith(".css")) stylesheet = name;
  }
  if (script === undefined) throw new Error("the dashboard bundle has no entry script");
  files["index.html"] = { contentType: "text/html; charset=utf-8", body: shell(script, stylesheet) };
  return files;
}

/** Bytes of the script and stylesheet once gzipped, the figure `bun run build` prints. */
export function gzippedSize(files: DashboardFiles): number {
  let total = 0;
  for (const [name, file] of Object.entries(files)) {
    if (name.endsWith(".js") || name.endsWith(".css")) total += gzipSync(file.body).byteLength;
  }
  return total;
}
