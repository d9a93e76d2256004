import type { products } from "../../db/schema";
import type { Product } from "./schemas";

type ProductRow = typeof products.$inferSelect;

/** The public product record: exactly the response schema's fields, nothing internal. */
export function toProduct(row: ProductRow): Product {
  return {
    externalId: row.externalId,
    name: row.name,
    description: row.description,
    price: row.price,
    category: row.category,
    brand: row.brand,
    inStock: row.inStock,
    attributes: row.attributes,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}
