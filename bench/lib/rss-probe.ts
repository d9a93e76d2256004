/**
 * Child process for the memory part: `bun bench/lib/rss-probe.ts <module> <export> <artifact file>`.
 * Measures resident memory before and after deserialising one model artifact in an otherwise idle
 * process, and prints one JSON line: {rssBefore, rssAfter, heapBefore, heapAfter, loadMs}.
 */
import { readFileSync } from "node:fs";

const [modulePath, exportName, file] = process.argv.slice(2);
if (!modulePath || !exportName || !file) {
  process.stderr.write("usage: rss-probe.ts <module> <export> <artifact>\n");
  process.exit(2);
}
const mod = (await import(modulePath)) as Record<string, (bytes: Uint8Array) => unknown>;
const load = mod[exportName]!;
const settle = () => {
  Bun.gc(true);
  Bun.gc(true);
};
settle();
const rssBefore = process.memoryUsage.rss();
const heapBefore = process.memoryUsage().heapUsed;
const started = performance.now();
// The file's bytes are read inside the measured window: a model that keeps views into them holds them too.
const model = load(new Uint8Array(readFileSync(file)));
const loadMs = performance.now() - started;
settle();
const rssAfter = process.memoryUsage.rss();
const heapAfter = process.memoryUsage().heapUsed;
(globalThis as Record<string, unknown>)["__keep"] = model;
process.stdout.write(`${JSON.stringify({ rssBefore, rssAfter, heapBefore, heapAfter, loadMs })}\n`);
