/**
 * The widget's script as served: built from source on first use when running from source, or taken from
 * the bundle `bun run build` embedded in the single binary (defined as WIDGET_BUNDLE at compile time, see
 * scripts/build.ts). Kept in memory with its gzip form and an ETag.
 */
import { gzipSync } from "node:zlib";
import { bundleWidget } from "../../web/widget/bundle";

declare const WIDGET_BUNDLE: string | undefined;

export interface WidgetScript {
  readonly js: string;
  readonly gzip: Uint8Array<ArrayBuffer>;
  readonly etag: string;
}

let script: Promise<WidgetScript> | undefined;

export function widgetScript(): Promise<WidgetScript> {
  script ??= load().catch((error) => {
    script = undefined;
    throw error;
  });
  return script;
}

async function load(): Promise<WidgetScript> {
  const js = typeof WIDGET_BUNDLE === "string" ? WIDGET_BUNDLE : (await bundleWidget()).js;
  const etag = `"${new Bun.CryptoHasher("sha256").update(js).digest("base64url").slice(0, 22)}"`;
  return { js, gzip: new Uint8Array(gzipSync(js, { level: 9 })), etag };
}
