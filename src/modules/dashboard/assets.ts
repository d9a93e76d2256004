/**
 * Where the dashboard's files come from: the executable built by `bun run build` carries them embedded
 * (one gzipped JSON, see scripts/build.ts); a service run from source bundles them from
 * src/web/dashboard on first use. Each file is kept gzipped as well, since nearly every browser asks so.
 */
import { gunzipSync, gzipSync } from "node:zlib";
import { bundleDashboard, type DashboardFiles, EMBEDDED_BUNDLE_PREFIX } from "../../web/dashboard/bundle";

export interface ServedFile {
  readonly contentType: string;
  readonly body: Uint8Array<ArrayBuffer>;
  readonly gzipped: Uint8Array<ArrayBuffer>;
}

async function embeddedFiles(): Promise<DashboardFiles | undefined> {
  const blob = Bun.embeddedFiles.find((file) =>
    (file as Blob & { name?: string }).name?.startsWith(EMBEDDED_BUNDLE_PREFIX),
  );
  if (blob === undefined) return undefined;
  const json = gunzipSync(new Uint8Array(await blob.arrayBuffer())).toString("utf8");
  return JSON.parse(json) as DashboardFiles;
}

async function loadFiles(): Promise<Map<string, ServedFile>> {
  const files = (await embeddedFiles()) ?? (await bundleDashboard());
  const served = new Map<string, ServedFile>();
  for (const [name, file] of Object.entries(files)) {
    const body = new TextEncoder().encode(file.body);
    served.set(name, { contentType: file.contentType, body, gzipped: new Uint8Array(gzipSync(body)) });
  }
  return served;
}

let files: Promise<Map<string, ServedFile>> | undefined;

/** The dashboard's files by name, loaded once per process; a failed load is retried on the next call. */
export function dashboardFiles(): Promise<Map<string, ServedFile>> {
  files ??= loadFiles().catch((error: unknown) => {
    files = undefined;
    throw error;
  });
  return files;
}
