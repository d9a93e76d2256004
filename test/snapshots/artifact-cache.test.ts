import { describe, expect, test } from "bun:test";
import { readdirSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createLogger } from "../../src/shared/logger";
import { ArtifactCache } from "../../src/snapshots/artifact-cache";
import { makeTempDir } from "../helpers/temp-dirs";

const quiet = createLogger("silent");
const bytesOf = (seed: number, length = 4096) => Uint8Array.from({ length }, (_, i) => (i * seed) & 0xff);

describe("artifact cache", () => {
  test("two writes of one model at the same time both land: each writes its own temporary file", async () => {
    const dir = makeTempDir("rs-cache-");
    const lines: string[] = [];
    const cache = new ArtifactCache(
      dir,
      createLogger("warn", (line) => lines.push(line)),
    );
    const bytes = bytesOf(5, 1 << 20);
    await Promise.all(Array.from({ length: 8 }, () => cache.write(2, 20, bytes)));
    expect(lines.filter((line) => line.includes("could not cache"))).toEqual([]);
    expect(readdirSync(dir)).toEqual(["2-20.artifact"]);
    expect(await cache.read(2, 20, bytes.length)).toEqual(bytes);
  });

  test("reads back what it wrote, only at the expected size; settle waits for writes under way", async () => {
    const dir = makeTempDir("rs-cache-");
    const cache = new ArtifactCache(dir, quiet);
    const bytes = bytesOf(3);
    void cache.write(1, 10, bytes);
    await cache.settle();
    expect(readdirSync(dir)).toEqual(["1-10.artifact"]);
    expect(await cache.read(1, 10, bytes.length)).toEqual(bytes);
    expect(await cache.read(1, 10, bytes.length + 1)).toBeUndefined();
    expect(await cache.read(1, 11, bytes.length)).toBeUndefined();
  });

  test("keeps the two newest models of an account with their index files; drops stale temporary files", async () => {
    const dir = makeTempDir("rs-cache-");
    const cache = new ArtifactCache(dir, quiet);
    for (const modelId of [1, 2]) {
      const files = await cache.annFiles(7, modelId);
      writeFileSync(files!.factors, "index");
      writeFileSync(files!.content, "index");
      await cache.write(7, modelId, bytesOf(modelId));
    }
    // Another account's files and a fresh temporary file (a write under way elsewhere) are left alone.
    await cache.write(8, 1, bytesOf(5));
    writeFileSync(join(dir, "7-3.artifact.999.tmp"), "partial");
    writeFileSync(join(dir, "7-2.artifact.998.tmp"), "partial");
    const old = (Date.now() - 2 * 60 * 60 * 1000) / 1000;
    utimesSync(join(dir, "7-2.artifact.998.tmp"), old, old);
    // Model 4's index files were written by its load before its copy: they survive model 3's prune.
    const newer = await cache.annFiles(7, 4);
    writeFileSync(newer!.factors, "index");

    await cache.write(7, 3, bytesOf(3));
    expect(readdirSync(dir).sort()).toEqual([
      "7-2.artifact",
      "7-2.content.hnsw",
      "7-2.factors.hnsw",
      "7-3.artifact",
      "7-3.artifact.999.tmp",
      "7-4.factors.hnsw",
      "8-1.artifact",
    ]);
  });
});
