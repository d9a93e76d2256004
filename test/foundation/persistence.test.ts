import { afterAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { eq } from "drizzle-orm";
import { loadConfig } from "../../src/config";
import { accounts } from "../../src/db/schema";
import { createDeps } from "../../src/deps";
import { createLogger } from "../../src/shared/logger";
import { usingPostgres } from "../helpers/context";
import { makeTempDir } from "../helpers/temp-dirs";

const dir = makeTempDir("rs-persist-");
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Opens the real store exactly as start-up does (settings → deps → migrations), without a memory override. */
async function openStore(env: Record<string, string>) {
  const config = loadConfig({ DATA_DIR: join(dir, "data"), JWT_SECRET: "p".repeat(40), ...env });
  return createDeps(config, { logger: createLogger("silent") });
}

async function writeCloseReopenRead(env: Record<string, string>) {
  const name = `persisted-${crypto.randomUUID()}`;
  const first = await openStore(env);
  const [row] = await first.database.db.insert(accounts).values({ name }).returning({ id: accounts.id });
  await first.stop();

  const second = await openStore(env);
  try {
    const found = await second.database.db
      .select({ name: accounts.name })
      .from(accounts)
      .where(eq(accounts.id, row?.id ?? -1));
    return { name, found };
  } finally {
    await second.stop();
  }
}

describe("persistence across a restart", () => {
  test("embedded PGlite: a row written under DATA_DIR is there after closing and reopening", async () => {
    const { name, found } = await writeCloseReopenRead({});
    expect(found).toEqual([{ name }]);
  }, 120_000);

  test.skipIf(!usingPostgres())(
    "Postgres (DATABASE_URL): a row written is there after closing and reopening",
    async () => {
      const { name, found } = await writeCloseReopenRead({
        DATABASE_URL: process.env.TEST_DATABASE_URL ?? "",
      });
      expect(found).toEqual([{ name }]);
    },
    120_000,
  );

  test("migrations are applied once: reopening an existing store applies none", async () => {
    const logs: string[] = [];
    const config = loadConfig({ DATA_DIR: join(dir, "data"), JWT_SECRET: "p".repeat(40) });
    const deps = await createDeps(config, { logger: createLogger("info", (line) => logs.push(line)) });
    await deps.stop();
    expect(logs.some((line) => line.includes("migrations applied"))).toBe(false);
  }, 120_000);
});
