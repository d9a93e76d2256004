import { and, eq } from "drizzle-orm";
import type { AppEvents } from "../../app-events";
import type { Database } from "../../db/client";
import { endUsers, interactions, orders, products } from "../../db/schema";
import type { TenantContext } from "../../http/tenant";
import { AppError } from "../../shared/errors";
import { assertCatalogueCapacity } from "../plans/limits";
import type { EnqueueDeps } from "../training/enqueue";
import { enqueueTraining } from "../training/enqueue";
import { DEMO_PREFIX, generateDemoData } from "./demo-data";
import type { QuickStartResultType } from "./schemas";

/** What this use case reads from the app. */
export interface Deps extends EnqueueDeps {
  readonly database: Database;
  readonly events: Pick<AppEvents, "endUserUpdated">;
}

const INSERT_CHUNK = 1000;

/**
 * Loads the demo shop into the account in one transaction (set-based inserts), then asks for a training
 * run on it. 409 when the demo data is already there (reset the sandbox to load it again).
 */
export async function quickStartSandbox({
  ctx,
  deps,
}: {
  ctx: TenantContext;
  deps: Deps;
}): Promise<QuickStartResultType> {
  const accountId = ctx.accountId;
  const [existing] = await deps.database.db
    .select({ id: products.id })
    .from(products)
    .where(and(eq(products.accountId, accountId), eq(products.externalId, `${DEMO_PREFIX}p-0001`)))
    .limit(1);
  if (existing !== undefined) {
    throw new AppError("CONFLICT", "The demo data is already loaded; reset the sandbox to load it again");
  }
  const demo = generateDemoData(accountId);
  await assertCatalogueCapacity(deps, ctx, "products", demo.products.length);
  await assertCatalogueCapacity(deps, ctx, "endUsers", demo.endUsers.length);

  await deps.database.db.transaction(async (tx) => {
    const productRows = await tx
      .insert(products)
      .values(demo.products.map((p) => ({ accountId, ...p })))
      .returning({ id: products.id });
    const userRows = await tx
      .insert(endUsers)
      .values(demo.endUsers.map((u) => ({ accountId, ...u })))
      .returning({ id: endUsers.id });
    const productIds = productRows.map((r) => r.id);
    const userIds = userRows.map((r) => r.id);
    const rows = demo.interactions.map((i) => ({
      accountId,
      endUserId: userIds[i.user]!,
      productId: productIds[i.product]!,
      interactionType: i.type,
      value: i.value,
      occurredAt: i.occurredAt,
    }));
    for (let start = 0; start < rows.length; start += INSERT_CHUNK) {
      await tx.insert(interactions).values(rows.slice(start, start + INSERT_CHUNK));
    }
    // Every PURCHASE is also an order, as for purchases recorded through the API.
    const purchases = demo.interactions.filter((i) => i.type === "PURCHASE");
    if (purchases.length > 0) {
      await tx.insert(orders).values(
        purchases.map((i) => ({
          accountId,
          endUserId: userIds[i.user]!,
          productId: productIds[i.product]!,
          quantity: 1,
          unitPrice: demo.products[i.product]!.price,
          occurredAt: i.occurredAt,
        })),
      );
    }
  });
  // Caches holding an answer given before for one of these ids (then nobody) ask again.
  for (const user of demo.endUsers)
    deps.events.endUserUpdated.emit({ accountId, externalId: user.externalId });

  let jobId: number | null = null;
  try {
    jobId = (await enqueueTraining(deps, ctx, {})).jobId;
  } catch (error) {
    // The demo data stays loaded; the user can train later when the day's allowance comes back.
    if (!(error instanceof AppError && error.code === "TRAINING_TOO_FREQUENT")) throw error;
  }
  return {
    products: demo.products.length,
    endUsers: demo.endUsers.length,
    interactions: demo.interactions.length,
    jobId,
    sampleEndUsers: mostActive(demo.interactions, (i) => i.user).map((u) => demo.endUsers[u]!.externalId),
    sampleProducts: mostActive(demo.interactions, (i) => i.product).map((p) => demo.products[p]!.externalId),
  };
}

export const SAMPLE_SIZE = 3;

/**
 * The indexes with the most interactions, most first (ties by index): the end users with the richest
 * histories and the products with the most signal, so a first recommendation call on them shows something.
 */
function mostActive(
  interactions: readonly { user: number; product: number }[],
  indexOf: (interaction: { user: number; product: number }) => number,
): number[] {
  const counts = new Map<number, number>();
  for (const interaction of interactions) {
    const index = indexOf(interaction);
    counts.set(index, (counts.get(index) ?? 0) + 1);
  }
  return [...counts]
    .sort(([a, x], [b, y]) => y - x || a - b)
    .slice(0, SAMPLE_SIZE)
    .map(([index]) => index);
}
