/**
 * A small shop for recommendation tests: products over a category tree with brands, prices, stock and
 * attributes, end users and interactions, all created through the public API.
 */
import { expect } from "bun:test";
import type { TestContext } from "../helpers/context";
import { registerTenant, type Tenant } from "../helpers/tenant";

export interface FixtureProduct {
  externalId: string;
  name: string;
  price: number;
  category: string;
  brand?: string;
  inStock?: boolean;
  attributes?: Record<string, unknown>;
}

const CATEGORIES = [
  "electronics/phones",
  "electronics/laptops",
  "books/fiction",
  "books/science",
  "home/kitchen",
];
const BRANDS = ["Acme", "Globex", "Initech", "Umbrella"];

/** `count` products: p1..pN cycling through categories and brands; every 7th is out of stock. */
export function catalogue(count: number): FixtureProduct[] {
  return Array.from({ length: count }, (_, k) => {
    const i = k + 1;
    return {
      externalId: `p${i}`,
      name: `Product ${i}`,
      price: 5 + ((i * 37) % 200),
      category: CATEGORIES[k % CATEGORIES.length]!,
      brand: BRANDS[k % BRANDS.length]!,
      inStock: i % 7 !== 0,
      attributes: { color: i % 2 === 0 ? "red" : "blue", size: i % 3 },
    };
  });
}

export interface Shop {
  tenant: Tenant;
  products: FixtureProduct[];
  byId: Map<string, FixtureProduct>;
}

export async function createShop(
  ctx: TestContext,
  products: FixtureProduct[] = catalogue(30),
): Promise<Shop> {
  const tenant = await registerTenant(ctx);
  await addProducts(ctx, tenant, products);
  return { tenant, products, byId: new Map(products.map((p) => [p.externalId, p])) };
}

export async function addProducts(
  ctx: TestContext,
  tenant: Tenant,
  products: FixtureProduct[],
): Promise<void> {
  for (const product of products) {
    const res = await ctx.request("POST", "/api/v1/products/", { apiKey: tenant.apiKey, body: product });
    expect(res.status).toBe(201);
  }
}

export async function createEndUser(
  ctx: TestContext,
  tenant: Tenant,
  body: {
    externalId: string;
    preferredCategories?: string[];
    priceRangeMin?: number;
    priceRangeMax?: number;
  },
): Promise<void> {
  const res = await ctx.request("POST", "/api/v1/end-users/", { apiKey: tenant.apiKey, body });
  expect(res.status).toBe(200);
}

export async function interact(
  ctx: TestContext,
  tenant: Tenant,
  user: string,
  product: string,
  type = "VIEW",
  value?: number,
): Promise<void> {
  const body: Record<string, unknown> = {
    external_user_id: user,
    external_product_id: product,
    interaction_type: type,
  };
  if (value !== undefined) body.value = value;
  const res = await ctx.request("POST", "/api/v1/interactions/", { apiKey: tenant.apiKey, body });
  expect(res.status).toBe(200);
}

export async function deleteProduct(ctx: TestContext, tenant: Tenant, externalId: string): Promise<void> {
  const res = await ctx.request("DELETE", `/api/v1/products/external/${externalId}`, {
    apiKey: tenant.apiKey,
  });
  expect(res.status).toBe(204);
}

export const ids = (body: { items: { externalId: string }[] }): string[] =>
  body.items.map((i) => i.externalId);
