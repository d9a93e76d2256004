/**
 * Builds `widget.js` from src/web/widget/widget.ts with Bun's bundler: one minified classic script for
 * browsers. Used by the `/widget.js` route when running from source, and by `bun run build`, which embeds
 * the result in the single binary and prints its gzipped size.
 */
import { gzipSync } from "node:zlib";

const ENTRY = `${import.meta.dir}/widget.ts`;

export interface WidgetBundle {
  readonly js: string;
  readonly gzipBytes: number;
}

export async function bundleWidget(): Promise<WidgetBundle> {
  const result = await Bun.build({
    entrypoints: [ENTRY],
    target: "browser",
    format: "iife",
    minify: true,
  });
  if (!result.success || result.outputs[0] === undefined) {
    throw new Error(`widget build failed: ${result.logs.map(String).join("\n")}`);
  }
  const js = await result.outputs[0].text();
  return { js, gzipBytes: gzipSync(js, { level: 9 }).byteLength };
}
