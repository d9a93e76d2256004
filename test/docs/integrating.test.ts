/**
 * docs/INTEGRATING.md runs as written: its curl snippets (one bash script, in page order) and its
 * TypeScript snippets (one module, in page order) are executed against a real service on a free port, and
 * each flow must reach a trained model, a recommendation and a recorded interaction.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  childEnv,
  PROJECT_ROOT,
  type ServerProcess,
  startServer,
  TEST_JWT_SECRET,
} from "../deploy/support/server-process";
import { makeTempDir } from "../helpers/temp-dirs";

const GUIDE = join(PROJECT_ROOT, "docs/INTEGRATING.md");

/** The fenced blocks of one language, in page order. */
export function snippets(markdown: string, language: "sh" | "ts"): string[] {
  return [...markdown.matchAll(/^```(\w+)\n([\s\S]*?)^```$/gm)]
    .filter((match) => match[1] === language)
    .map((match) => match[2]!);
}

const dir = makeTempDir("rs-guide-");
let server: ServerProcess | undefined;

beforeAll(async () => {
  server = await startServer({
    env: childEnv({
      PORT: "0",
      HOST: "127.0.0.1",
      DATA_DIR: join(dir, "data"),
      JWT_SECRET: TEST_JWT_SECRET,
      LOG_LEVEL: "info",
    }),
  });
}, 120_000);

afterAll(async () => {
  await server?.stop();
});

async function run(command: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const proc = Bun.spawn(command, {
    cwd: dir,
    env: childEnv({ BASE_URL: server!.baseUrl }),
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  return { code, stdout, stderr };
}

/** The curl snippets need curl and jq: missing outside CI, that test is skipped with the reason printed. */
const missingTools = ["curl", "jq", "bash"].filter((tool) => Bun.which(tool) === null);
if (missingTools.length > 0) {
  const reason = `${missingTools.join(" and ")} not installed (apt-get install -y ${missingTools.join(" ")})`;
  if (process.env.CI) throw new Error(`the guide's curl snippets must run in CI, but ${reason}`);
  console.warn(`docs/INTEGRATING.md curl snippets skipped: ${reason}`);
}

describe("docs/INTEGRATING.md", () => {
  const markdown = readFileSync(GUIDE, "utf8");

  test("has a curl and a TypeScript snippet for each of its steps", () => {
    expect(snippets(markdown, "sh").length).toBe(5);
    expect(snippets(markdown, "ts").length).toBe(5);
  });

  test.skipIf(missingTools.length > 0)(
    "the curl snippets run in order against a live server: key → ingest → train → recommend → interaction",
    async () => {
      const script = join(dir, "guide.sh");
      writeFileSync(script, ["set -euo pipefail", ...snippets(markdown, "sh")].join("\n"));
      const { code, stdout, stderr } = await run(["bash", script]);
      expect({ code, stderr }).toEqual({ code: 0, stderr: "" });
      expect(stdout).toContain("key: sk_live_");
      expect(stdout).toContain("ingestion: completed\n");
      expect(stdout).toContain("training: completed\n");
      const lines = stdout.trim().split("\n");
      const recommended = JSON.parse(lines.at(-2)!) as { externalId: string }[];
      expect(recommended.length).toBeGreaterThan(0);
      expect(recommended.every((item) => item.externalId.startsWith("sku-"))).toBe(true);
      expect(JSON.parse(lines.at(-1)!)).toEqual({
        external_product_id: recommended[0]!.externalId,
        interaction_type: "CLICK",
        value: 1,
      });
    },
    180_000,
  );

  test("the TypeScript snippets run in order against a live server, to the same end", async () => {
    const module = join(dir, "guide.ts");
    writeFileSync(module, `${snippets(markdown, "ts").join("\n")}\nexport {};\n`);
    const { code, stdout, stderr } = await run([process.execPath, module]);
    expect({ code, stderr }).toEqual({ code: 0, stderr: "" });
    expect(stdout).toContain("ingestion: completed []");
    expect(stdout).toMatch(/^training: completed \{/m);
    expect(stdout).toMatch(/^sku-\d .+ \w+$/m);
    expect(stdout).toContain("recorded: CLICK 1");
  }, 180_000);
});
