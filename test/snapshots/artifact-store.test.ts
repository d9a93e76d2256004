import { describe, expect, test } from "bun:test";
import { and, eq, sql } from "drizzle-orm";
import { modelArtifactChunks, models } from "../../src/db/schema";
import { ARTIFACT_CHUNK_BYTES, readArtifact, writeArtifact } from "../../src/training/artifact-store";
import { sharedTestContext, type TestContext } from "../helpers/context";
import { rejectionOf } from "../helpers/rejection";
import { registerTenant } from "../helpers/tenant";

/** A model row for the artifact to belong to. */
async function insertModel(ctx: TestContext, accountId: number): Promise<{ id: number }> {
  const [model] = await ctx.deps.database.db
    .insert(models)
    .values({
      accountId,
      version: 1,
      algorithm: "test",
      trainingSeconds: 0,
      counts: { users: 0, items: 0, interactions: 0 },
      metrics: {},
    })
    .returning({ id: models.id });
  return model!;
}

describe("model artifact store", () => {
  test("an artifact of several chunks reads back byte for byte; another account's model is not read", async () => {
    const ctx = await sharedTestContext();
    const tenant = await registerTenant(ctx);
    const other = await registerTenant(ctx);
    const model = await insertModel(ctx, tenant.accountId);
    // Every byte value, across two full chunks and a partial third.
    const bytes = new Uint8Array(2 * ARTIFACT_CHUNK_BYTES + 12_345);
    for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 7919 + (i >> 13)) & 0xff;
    const target = { accountId: tenant.accountId, modelId: model.id };
    await ctx.deps.database.db.transaction((tx) => writeArtifact(tx, target, bytes));

    const read = await readArtifact(ctx.deps.database, target);
    expect(read?.length).toBe(bytes.length);
    expect(Buffer.compare(Buffer.from(read!), Buffer.from(bytes))).toBe(0);
    expect(await readArtifact(ctx.deps.database, { accountId: other.accountId, modelId: model.id })).toBe(
      undefined,
    );
  });

  test("an artifact missing a chunk is refused, and the store keeps answering", async () => {
    const ctx = await sharedTestContext();
    const tenant = await registerTenant(ctx);
    const model = await insertModel(ctx, tenant.accountId);
    const target = { accountId: tenant.accountId, modelId: model.id };
    const bytes = new Uint8Array(3 * ARTIFACT_CHUNK_BYTES).fill(7);
    await ctx.deps.database.db.transaction((tx) => writeArtifact(tx, target, bytes));
    await ctx.deps.database.db
      .delete(modelArtifactChunks)
      .where(and(eq(modelArtifactChunks.modelId, target.modelId), eq(modelArtifactChunks.seq, 1)));

    for (let attempt = 0; attempt < 3; attempt++) {
      expect((await rejectionOf(readArtifact(ctx.deps.database, target))).message).toMatch(/artifact/);
    }
    expect(await ctx.deps.database.rows<{ one: number }>(sql`select 1::int as one`)).toEqual([{ one: 1 }]);
  });
});
