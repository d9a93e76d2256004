import { sql } from "drizzle-orm";
import type { AppEvents } from "../../app-events";
import type { Database } from "../../db/client";
import { products } from "../../db/schema";
import { AppError } from "../../shared/errors";
import { assertCatalogueCapacityIn } from "../plans/limits";
import type { PlanTableType } from "../plans/schemas";
import { toProduct } from "./record";
import type { Product, ProductCreate } from "./schemas";

/**
 * Creates a product, or revives a soft-deleted one with the same external id, within the plan's maxProducts
 * (429 PLAN_LIMIT_EXCEEDED past it, checked in the same transaction). One upsert: it only touches an
 * existing row when that row is deleted, so a live duplicate returns nothing → 409, and two concurrent
 * creates cannot both succeed.
 */
export async function createProduct({
  ctx,
  deps,
  input,
}: {
  ctx: { readonly accountId: number };
  deps: {
    readonly database: Database;
    readonly plans: Readonly<PlanTableType>;
    readonly events: Pick<AppEvents, "productsChanged">;
  };
  input: ProductCreate;
}): Promise<Product> {
  const values = {
    name: input.name,
    description: input.description ?? null,
    price: input.price,
    category: input.category,
    brand: input.brand ?? null,
    inStock: input.inStock ?? true,
    attributes: input.attributes ?? {},
  };
  const row = await deps.database.db.transaction(async (tx) => {
    await assertCatalogueCapacityIn(deps, tx, ctx.accountId, "products", 1);
    const [created] = await tx
      .insert(products)
      .values({ accountId: ctx.accountId, externalId: input.externalId, ...values })
      .onConflictDoUpdate({
        target: [products.accountId, products.externalId],
        set: { ...values, deletedAt: null, createdAt: sql`now()`, updatedAt: sql`now()` },
        setWhere: sql`${products.deletedAt} is not null`,
      })
      .returning();
    return created;
  });
  if (row === undefined) {
    throw new AppError("CONFLICT", `A product with externalId "${input.externalId}" already exists`);
  }
  deps.events.productsChanged.emit({
    accountId: ctx.accountId,
    externalIds: [row.externalId],
    deleted: false,
  });
  return toProduct(row);
}
