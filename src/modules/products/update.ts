import type { AppEvents } from "../../app-events";
import type { Database } from "../../db/client";
import { patchProduct } from "./patch";
import type { Product, ProductUpdate } from "./schemas";

/**
 * Full update (PUT): every field is replaced; omitted optional fields return to their defaults. The same
 * write as a PATCH that names every field.
 */
export function updateProduct({
  ctx,
  deps,
  input,
}: {
  ctx: { readonly accountId: number };
  deps: { readonly database: Database; readonly events: Pick<AppEvents, "productsChanged"> };
  input: { externalId: string; product: ProductUpdate };
}): Promise<Product> {
  const { product } = input;
  return patchProduct({
    ctx,
    deps,
    input: {
      externalId: input.externalId,
      changes: {
        name: product.name,
        description: product.description ?? null,
        price: product.price,
        category: product.category,
        brand: product.brand ?? null,
        inStock: product.inStock ?? true,
        attributes: product.attributes ?? {},
      },
    },
  });
}
