import { describe, expect, spyOn, test } from "bun:test";
import { join } from "node:path";
import { createLogger } from "../../src/shared/logger";

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe("the default log sink", () => {
  test("writes a turn's lines together once the turn ends, in order", async () => {
    const writes: string[] = [];
    const spy = spyOn(process.stdout, "write").mockImplementation(((text: string) => {
      writes.push(text);
      return true;
    }) as typeof process.stdout.write);
    try {
      await expectBatched(writes);
    } finally {
      spy.mockRestore();
    }
  });
});

async function expectBatched(writes: string[]): Promise<void> {
  const logger = createLogger("info");
  logger.info("first", { n: 1 });
  logger.debug("below the level");
  logger.warn("second", { n: 2 });
  logger.child({ requestId: "r-1" }).error("third");
  expect(writes).toEqual([]);
  await nextTurn();
  await nextTurn();
  expect(writes).toHaveLength(1);
  const lines = writes[0]!.split("\n");
  expect(lines.at(-1)).toBe("");
  const entries = lines.slice(0, -1).map((line) => JSON.parse(line));
  expect(entries.map((e) => [e.level, e.msg])).toEqual([
    ["info", "first"],
    ["warn", "second"],
    ["error", "third"],
  ]);
  expect(entries[2].requestId).toBe("r-1");

  logger.info("a later turn");
  await nextTurn();
  await nextTurn();
  expect(writes).toHaveLength(2);
  expect(JSON.parse(writes[1]!).msg).toBe("a later turn");
}

describe("lines held when the process ends", () => {
  const run = async (ending: string) => {
    const script = [
      `import { createLogger } from ${JSON.stringify(join(import.meta.dir, "../../src/shared/logger"))};`,
      `const logger = createLogger("info");`,
      `for (let i = 0; i < 3; i++) logger.info("line", { i });`,
      ending,
    ].join("\n");
    const child = Bun.spawn([process.execPath, "-e", script], { stdout: "pipe", stderr: "pipe" });
    const [out, code] = await Promise.all([new Response(child.stdout).text(), child.exited]);
    return {
      code,
      lines: out
        .split("\n")
        .filter((line) => line.startsWith("{"))
        .map((l) => JSON.parse(l).i),
    };
  };

  test("are written on process.exit in the same turn", async () => {
    expect(await run("process.exit(3);")).toEqual({ code: 3, lines: [0, 1, 2] });
  });

  test("are written when an uncaught error ends the process", async () => {
    expect(await run(`throw new Error("boom");`)).toEqual({ code: 1, lines: [0, 1, 2] });
  });

  test("are written when the process runs out of work", async () => {
    expect(await run("")).toEqual({ code: 0, lines: [0, 1, 2] });
  });
});
