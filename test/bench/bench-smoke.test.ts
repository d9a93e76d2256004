/**
 * Runs `bun run bench --smoke` end to end so the harness cannot rot: every part must finish as "ok" or as
 * "skipped" with a "not available yet" reason, print its tables, and the run must write its JSON result.
 */
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { PART_NAMES, type RunResult } from "../../bench/lib/types";
import { usingPostgres } from "../helpers/context";
import { makeTempDir } from "../helpers/temp-dirs";

const repoRoot = join(import.meta.dir, "..", "..");

// The bench creates and drops its own Postgres databases and covers PGlite itself, so running it again in
// the suite's Postgres pass would only repeat the same work.
describe.skipIf(usingPostgres())("bench --smoke", () => {
  test("every part completes or reports what is not available yet, and the run writes its JSON result", async () => {
    const out = makeTempDir("rs-bench-smoke-");
    try {
      const child = Bun.spawn(
        [process.execPath, "run", join(repoRoot, "bench", "index.ts"), "--smoke", "--out", out],
        {
          cwd: repoRoot,
          stdout: "pipe",
          stderr: "pipe",
        },
      );
      const [stdout, stderr, code] = await Promise.all([
        new Response(child.stdout).text(),
        new Response(child.stderr).text(),
        child.exited,
      ]);
      if (code !== 0) console.error(stdout, stderr);
      expect(code).toBe(0);

      const files = readdirSync(out).filter((f) => f.endsWith(".json"));
      expect(files).toHaveLength(1);
      const run = JSON.parse(readFileSync(join(out, files[0]!), "utf8")) as RunResult;
      expect(run.size).toBe("smoke");
      expect(run.machine.cores).toBeGreaterThan(0);
      expect(run.machine.bunVersion).toBe(Bun.version);
      expect(run.parts.map((p) => p.name)).toEqual([...PART_NAMES]);
      for (const part of run.parts) {
        expect(["ok", "skipped"]).toContain(part.status);
        if (part.status === "skipped") expect(part.reason).toMatch(/^not available yet: /);
        expect(part.tables.length).toBeGreaterThan(0);
        expect(stdout).toContain(`## ${part.tables[0]!.title}`);
      }
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  }, 120_000);
});
