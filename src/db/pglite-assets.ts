/**
 * PGlite's WebAssembly modules and file-system bundle, imported as files so `bun build --compile` embeds
 * them; PGlite would otherwise look for them next to its own JavaScript, which does not exist inside a
 * single binary. Compiled once per process and shared by every store opened in it (tests open many).
 */
import type { PGliteOptions } from "@electric-sql/pglite";
import initdbWasmPath from "../../node_modules/@electric-sql/pglite/dist/initdb.wasm" with { type: "file" };
import fsBundlePath from "../../node_modules/@electric-sql/pglite/dist/pglite.data" with { type: "file" };
import pgliteWasmPath from "../../node_modules/@electric-sql/pglite/dist/pglite.wasm" with { type: "file" };

export type PgliteAssets = Pick<PGliteOptions, "pgliteWasmModule" | "initdbWasmModule" | "fsBundle">;

let assets: Promise<PgliteAssets> | undefined;

export function pgliteAssets(): Promise<PgliteAssets> {
  assets ??= (async () => {
    const [pgliteWasmModule, initdbWasmModule, fsBundle] = await Promise.all([
      Bun.file(pgliteWasmPath)
        .arrayBuffer()
        .then((bytes) => WebAssembly.compile(bytes)),
      Bun.file(initdbWasmPath)
        .arrayBuffer()
        .then((bytes) => WebAssembly.compile(bytes)),
      Bun.file(fsBundlePath)
        .arrayBuffer()
        .then((bytes) => new Blob([bytes])),
    ]);
    return { pgliteWasmModule, initdbWasmModule, fsBundle };
  })();
  return assets;
}
