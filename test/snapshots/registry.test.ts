import { describe, expect, test } from "bun:test";
import { readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { sql } from "drizzle-orm";
import { createAppEvents } from "../../src/app-events";
import { createLogger } from "../../src/shared/logger";
import { decodeSlots } from "../../src/snapshots/decode-in-worker";
import { productsWatermark, refreshProducts } from "../../src/snapshots/freshness";
import { SnapshotRegistry } from "../../src/snapshots/registry";
import { itemsRevision } from "../../src/snapshots/revision";
import { sharedTestContext, type TestContext, usingPostgres } from "../helpers/context";
import { makeTempDir } from "../helpers/temp-dirs";
import { registerTenant, type Tenant } from "../helpers/tenant";
import { generateTenant, trainAndWait } from "../pipeline/fixtures";

const quiet = createLogger("silent");

async function trainedTenant(ctx: TestContext): Promise<{ tenant: Tenant; modelId: number }> {
  const tenant = await registerTenant(ctx);
  await generateTenant(ctx, tenant.accountId);
  const job = await trainAndWait(ctx, tenant.apiKey);
  expect(job.status).toBe("completed");
  return { tenant, modelId: job.modelId! };
}

/** A registry of its own over the shared context's store, as a restarted process has. */
function freshRegistry(ctx: TestContext): SnapshotRegistry {
  return new SnapshotRegistry({
    database: ctx.deps.database,
    logger: quiet,
    maxBytes: 1 << 30,
    events: createAppEvents(),
    artifacts: ctx.deps.artifacts,
  });
}

async function until(check: () => boolean): Promise<void> {
  while (!check()) await Bun.sleep(20);
}

describe("snapshot registry", () => {
  test("an account without a published model has no snapshot", async () => {
    const ctx = await sharedTestContext();
    const tenant = await registerTenant(ctx);
    expect(await ctx.deps.snapshots.getSnapshot(tenant.accountId)).toBeUndefined();
    expect(ctx.deps.snapshots.peekSnapshot(tenant.accountId)).toBeUndefined();
  }, 120_000);

  test("loads lazily from the stored artifact (as after a restart); peek returns the same reference", async () => {
    const ctx = await sharedTestContext();
    const { tenant, modelId } = await trainedTenant(ctx);
    const fresh = freshRegistry(ctx);
    expect(fresh.peekSnapshot(tenant.accountId)).toBeUndefined();
    const snapshot = await fresh.getSnapshot(tenant.accountId);
    expect(snapshot).toMatchObject({ accountId: tenant.accountId, modelId, version: 1 });
    expect(fresh.peekSnapshot(tenant.accountId)).toBe(snapshot!);
    const items = snapshot!.items;
    const i = items.indexByExternalId.get("p-1-3")!;
    expect(items.externalIds[i]).toBe("p-1-3");
    expect(items.names[i]).toBe("Item 3 of category 1");
    expect(items.prices[i]).toBe(13);
    expect(items.categories[i]).toBe("cat1/sub1");
    expect(items.brands[i]).toBe("brand0");
    expect(items.inStock[i]).toBe(1);
    expect(items.deleted[i]).toBe(0);
    expect(snapshot!.model.nItems).toBe(items.count);
    expect(snapshot!.bytes()).toBeGreaterThan(0);
    expect(fresh.stats()).toMatchObject({ snapshots: 1, bytes: snapshot!.bytes() });
  }, 120_000);

  test("a load waits for a free decoding slot: loads of many accounts at once decode a few at a time", async () => {
    const ctx = await sharedTestContext();
    const { tenant, modelId } = await trainedTenant(ctx);
    const fresh = freshRegistry(ctx);
    // Every slot taken, as by the loads of other accounts.
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const holders = Array.from({ length: decodeSlots.size }, () => decodeSlots.run(() => held));
    let loaded = false;
    const loading = fresh.getSnapshot(tenant.accountId).then((snapshot) => {
      loaded = true;
      return snapshot;
    });
    await until(() => decodeSlots.waiting >= 1);
    await Bun.sleep(50);
    expect(loaded).toBe(false);
    release();
    await Promise.all(holders);
    expect(await loading).toMatchObject({ accountId: tenant.accountId, modelId });
  }, 120_000);

  test("on the embedded store the artifact is a file under DATA_DIR; the database holds only the model row", async () => {
    if (usingPostgres()) return;
    const ctx = await sharedTestContext();
    const { tenant, modelId } = await trainedTenant(ctx);
    const [row] = await ctx.deps.database.rows<{ bytes: number; chunks: number }>(sql`
      select m.artifact_bytes as bytes,
        (select count(*)::int from model_artifact_chunks c where c.model_id = m.id) as chunks
      from models m where m.id = ${modelId}`);
    expect(row?.chunks).toBe(0);
    const file = join(ctx.deps.config.dataDir, "artifacts", `${tenant.accountId}-${modelId}.artifact`);
    expect(Bun.file(file).size).toBe(Number(row?.bytes));
    // No staging file is left behind by the run.
    expect(readdirSync(join(ctx.deps.config.dataDir, "artifacts")).filter((f) => f.endsWith(".tmp"))).toEqual(
      [],
    );
    const loaded = await freshRegistry(ctx).getSnapshot(tenant.accountId);
    expect(loaded?.modelId).toBe(modelId);
  }, 120_000);

  test("after a restart the artifact comes from the local disk copy; a damaged copy falls back to the database", async () => {
    // On the embedded store the file is the only copy (see the test above): nothing to fall back to.
    if (!usingPostgres()) return;
    const ctx = await sharedTestContext();
    const { tenant, modelId } = await trainedTenant(ctx);
    const artifactDir = makeTempDir("rs-artifacts-");
    const options = {
      database: ctx.deps.database,
      logger: quiet,
      maxBytes: 1 << 30,
      artifactDir,
      events: createAppEvents(),
    };
    const first = await new SnapshotRegistry(options).getSnapshot(tenant.accountId);
    expect(first?.modelId).toBe(modelId);
    const file = join(artifactDir, `${tenant.accountId}-${modelId}.artifact`);
    while (!readdirSync(artifactDir).includes(`${tenant.accountId}-${modelId}.artifact`)) await Bun.sleep(10);

    const size = Bun.file(file).size;
    writeFileSync(file, new Uint8Array(size).fill(7));
    const fromDatabase = await new SnapshotRegistry(options).getSnapshot(tenant.accountId);
    expect(fromDatabase?.items.count).toBe(first?.items.count);

    await Bun.sleep(50); // the repaired copy is written in the background
    while (Bun.file(file).size !== size || (await Bun.file(file).bytes())[0] === 7) await Bun.sleep(10);
    await ctx.deps.database.rows(sql`delete from model_artifact_chunks where model_id = ${modelId}`);
    const fromDisk = await new SnapshotRegistry(options).getSnapshot(tenant.accountId);
    expect(fromDisk?.modelId).toBe(modelId);
    expect(fromDisk?.items.externalIds).toEqual(first?.items.externalIds);
    let loads = 0;
    const counting = {
      ...ctx.deps.database,
      rows: <T>(...args: Parameters<typeof ctx.deps.database.rows>) => {
        loads++;
        return ctx.deps.database.rows<T>(...args);
      },
    };
    const withoutCopy = new SnapshotRegistry({ ...options, database: counting, artifactDir: undefined });
    expect(await withoutCopy.getSnapshot(tenant.accountId)).toBeUndefined();
    // A model that cannot be loaded is not retried on every request.
    const afterFailure = loads;
    expect(await withoutCopy.getSnapshot(tenant.accountId)).toBeUndefined();
    expect(loads).toBe(afterFailure);
  }, 120_000);

  test("the LRU keeps total bytes under the bound by evicting the least recently used account", async () => {
    const ctx = await sharedTestContext();
    const a = await trainedTenant(ctx);
    const b = await trainedTenant(ctx);
    const probe = freshRegistry(ctx);
    const size = (await probe.getSnapshot(a.tenant.accountId))!.bytes();
    const bounded = new SnapshotRegistry({
      database: ctx.deps.database,
      logger: quiet,
      maxBytes: size + size / 2,
      events: createAppEvents(),
      artifacts: ctx.deps.artifacts,
    });
    await bounded.getSnapshot(a.tenant.accountId);
    await bounded.getSnapshot(b.tenant.accountId);
    expect(bounded.stats().snapshots).toBe(1);
    expect(bounded.peekSnapshot(a.tenant.accountId)).toBeUndefined();
    expect(bounded.peekSnapshot(b.tenant.accountId)?.modelId).toBe(b.modelId);
    expect(bounded.stats().bytes).toBeLessThanOrEqual(size + size / 2);
  }, 120_000);

  test("a product deleted through the API is flagged in the live snapshot at once", async () => {
    const ctx = await sharedTestContext();
    const { tenant } = await trainedTenant(ctx);
    const snapshot = (await ctx.deps.snapshots.getSnapshot(tenant.accountId))!;
    const i = snapshot.items.indexByExternalId.get("p-0-0")!;
    expect(snapshot.items.deleted[i]).toBe(0);
    const res = await ctx.request("DELETE", "/api/v1/products/external/p-0-0", { apiKey: tenant.apiKey });
    expect(res.status).toBe(204);
    expect(snapshot.items.deleted[i]).toBe(1);
  }, 120_000);

  test("catalogue changes made elsewhere (another process) reach the snapshot by the background refresh", async () => {
    const ctx = await sharedTestContext();
    const { tenant } = await trainedTenant(ctx);
    const registry = new SnapshotRegistry({
      database: ctx.deps.database,
      logger: quiet,
      maxBytes: 1 << 30,
      events: createAppEvents(),
      productRefreshMs: 0,
      artifacts: ctx.deps.artifacts,
    });
    const snapshot = (await registry.getSnapshot(tenant.accountId))!;
    const i = snapshot.items.indexByExternalId.get("p-2-1")!;
    const j = snapshot.items.indexByExternalId.get("p-2-2")!;
    await Bun.sleep(5); // updated_at must move past the snapshot's watermark
    await ctx.deps.database.rows(sql`
      update products set price = 99, in_stock = false, updated_at = now()
      where account_id = ${tenant.accountId} and external_id = 'p-2-1'`);
    await ctx.deps.database.rows(sql`
      update products set deleted_at = now(), updated_at = now()
      where account_id = ${tenant.accountId} and external_id = 'p-2-2'`);
    await until(() => {
      registry.peekSnapshot(tenant.accountId);
      return snapshot.items.prices[i] === 99 && snapshot.items.deleted[j] === 1;
    });
    expect(snapshot.items.inStock[i]).toBe(0);
    await registry.stop();

    // With nothing new since the watermark, a refresh reads no rows and leaves the revision alone.
    const watermark = await productsWatermark(ctx.deps.database, tenant.accountId);
    const revision = itemsRevision(snapshot);
    expect(await refreshProducts(ctx.deps.database, snapshot, watermark)).toBe(watermark);
    expect(itemsRevision(snapshot)).toBe(revision);
  }, 120_000);

  test("erasing an end user removes them from the snapshot's user map (API erasure and direct hook)", async () => {
    const ctx = await sharedTestContext();
    const { tenant } = await trainedTenant(ctx);
    const snapshot = (await ctx.deps.snapshots.getSnapshot(tenant.accountId))!;
    expect(snapshot.users.indexByExternalId.has("u-1")).toBe(true);
    const res = await ctx.request("DELETE", "/api/v1/end-users/external/u-1", { apiKey: tenant.apiKey });
    expect(res.status).toBe(200);
    expect(snapshot.users.indexByExternalId.has("u-1")).toBe(false);
    ctx.deps.snapshots.evictEndUser(tenant.accountId, "u-2");
    expect(snapshot.users.indexByExternalId.has("u-2")).toBe(false);
    // A snapshot loaded later from the same artifact does not map the erased user either.
    const fresh = freshRegistry(ctx);
    const reloaded = (await fresh.getSnapshot(tenant.accountId))!;
    expect(reloaded.users.indexByExternalId.has("u-1")).toBe(false);
    expect(reloaded.users.indexByExternalId.has("u-3")).toBe(true);
  }, 120_000);

  test("publication swaps the snapshot in the background; a request holding the old one keeps it intact", async () => {
    const ctx = await sharedTestContext();
    const { tenant, modelId } = await trainedTenant(ctx);
    const old = (await ctx.deps.snapshots.getSnapshot(tenant.accountId))!;
    expect(old.modelId).toBe(modelId);
    await ctx.deps.database.rows(sql`update models set metrics = '{}'::jsonb where id = ${modelId}`);
    const next = await trainAndWait(ctx, tenant.apiKey);
    expect(next.metrics?.decision).toMatchObject({ published: true });
    await until(() => ctx.deps.snapshots.peekSnapshot(tenant.accountId)?.modelId === next.modelId);
    expect(old.modelId).toBe(modelId);
    expect(old.items.count).toBe(40);
  }, 120_000);

  test("products deleted before training are not in the model", async () => {
    const ctx = await sharedTestContext();
    const tenant = await registerTenant(ctx);
    await generateTenant(ctx, tenant.accountId);
    await ctx.deps.database.rows(sql`
      update products set deleted_at = now() where account_id = ${tenant.accountId} and external_id = 'p-3-0'`);
    const job = await trainAndWait(ctx, tenant.apiKey);
    expect(job.status).toBe("completed");
    const snapshot = (await ctx.deps.snapshots.getSnapshot(tenant.accountId))!;
    expect(snapshot.items.count).toBe(39);
    expect(snapshot.items.indexByExternalId.has("p-3-0")).toBe(false);
  }, 120_000);
});
