import { EventType } from "../../src/engine/types";
import type { SyntheticDataset } from "../data/synthetic";

/** Synthetic data as the API's bulk-ingestion records (bodies a shop's back end would send). */

export interface ProductRecord {
  externalId: string;
  name: string;
  price: number;
  category: string;
  brand: string;
  inStock: boolean;
}

export interface UserRecord {
  externalId: string;
}

export interface InteractionRecord {
  external_user_id: string;
  external_product_id: string;
  interaction_type: string;
  value: number;
  timestamp: string;
}

const TYPE_NAMES = Object.fromEntries(Object.entries(EventType).map(([name, code]) => [code, name]));

export const productId = (i: number) => `p${i}`;
export const userId = (u: number) => `u${u}`;

export function catalogueRecords(data: SyntheticDataset): { products: ProductRecord[]; users: UserRecord[] } {
  const products: ProductRecord[] = [];
  for (let i = 0; i < data.events.nItems; i++) {
    const meta = data.items?.[i];
    products.push({
      externalId: productId(i),
      name: meta?.name ?? `item ${i}`,
      // 1..100 in steps of 1, so `price < 2` selects exactly 1% of the catalogue.
      price: meta?.price ?? 1 + (i % 100),
      category: meta?.categoryPath ?? `cat${data.itemCategory[i]}`,
      brand: meta?.brand ?? `brand${i % 50}`,
      inStock: i % 10 !== 9,
    });
  }
  const users: UserRecord[] = [];
  for (let u = 0; u < data.events.nUsers; u++) users.push({ externalId: userId(u) });
  return { products, users };
}

export function interactionRecords(data: SyntheticDataset): InteractionRecord[] {
  const e = data.events;
  const out: InteractionRecord[] = new Array(e.user.length);
  for (let i = 0; i < e.user.length; i++) {
    out[i] = {
      external_user_id: userId(e.user[i]!),
      external_product_id: productId(e.item[i]!),
      interaction_type: TYPE_NAMES[e.type[i]!] ?? "VIEW",
      value: e.value[i]! > 0 ? e.value[i]! : 1,
      timestamp: new Date(e.ts[i]!).toISOString(),
    };
  }
  return out;
}
