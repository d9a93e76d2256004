/**
 * A believable demo shop, generated deterministically from a seed: products over ten categories with
 * brands and price ranges per category, end users with one or two favourite categories and a price
 * sensitivity, and a view → click → cart → purchase funnel biased towards each user's favourites and
 * towards popular items (so a trained model has real structure to find).
 */
import { createRng } from "../../engine/rng";

interface CategorySpec {
  path: string;
  brands: string[];
  nouns: string[];
  price: [number, number];
}

const CATEGORIES: CategorySpec[] = [
  {
    path: "electronics/phones",
    brands: ["Nokta", "Pixelon", "Gala"],
    nouns: ["Smartphone", "Phone", "Mini Phone"],
    price: [149, 1199],
  },
  {
    path: "electronics/laptops",
    brands: ["Lumen", "Corevo", "Nokta"],
    nouns: ["Laptop", "Ultrabook", "Notebook"],
    price: [399, 2499],
  },
  {
    path: "electronics/audio",
    brands: ["Sonra", "Bassline", "Pixelon"],
    nouns: ["Headphones", "Earbuds", "Speaker"],
    price: [19, 399],
  },
  {
    path: "home/kitchen",
    brands: ["Casa Fina", "Hearth", "Brio"],
    nouns: ["Blender", "Kettle", "Pan Set", "Knife"],
    price: [12, 299],
  },
  {
    path: "home/furniture",
    brands: ["Oakline", "Norda", "Hearth"],
    nouns: ["Chair", "Desk", "Shelf", "Lamp"],
    price: [29, 899],
  },
  {
    path: "fashion/shoes",
    brands: ["Stride", "Veloz", "Pampa"],
    nouns: ["Running Shoes", "Sneakers", "Boots"],
    price: [35, 220],
  },
  {
    path: "fashion/apparel",
    brands: ["Pampa", "Urbe", "Veloz"],
    nouns: ["T-Shirt", "Hoodie", "Jacket", "Jeans"],
    price: [9, 180],
  },
  {
    path: "sports/fitness",
    brands: ["Veloz", "Ironleaf", "Stride"],
    nouns: ["Yoga Mat", "Dumbbells", "Kettlebell"],
    price: [15, 250],
  },
  {
    path: "books/fiction",
    brands: ["Paperlane", "Inkwell"],
    nouns: ["Novel", "Thriller", "Fantasy Saga"],
    price: [7, 35],
  },
  {
    path: "beauty/skincare",
    brands: ["Dermia", "Bloom", "Aurea"],
    nouns: ["Serum", "Moisturiser", "Cleanser"],
    price: [8, 95],
  },
];
const ADJECTIVES = ["Classic", "Pro", "Lite", "Max", "Eco", "Urban", "Prime", "Air", "Nova", "Plus"];
const COLORS = ["black", "white", "blue", "red", "green", "grey"];

export interface DemoProduct {
  externalId: string;
  name: string;
  description: string;
  price: number;
  category: string;
  brand: string;
  inStock: boolean;
  attributes: Record<string, unknown>;
}

export interface DemoEndUser {
  externalId: string;
  preferredCategories: string[];
  priceRangeMin: number;
  priceRangeMax: number;
}

export interface DemoInteraction {
  user: number;
  product: number;
  type: "VIEW" | "CLICK" | "CART" | "PURCHASE" | "RATING";
  value: number;
  occurredAt: Date;
}

export interface DemoData {
  products: DemoProduct[];
  endUsers: DemoEndUser[];
  interactions: DemoInteraction[];
}

export const DEMO_PREFIX = "demo-";

export function generateDemoData(
  seed: number,
  sizes = { products: 200, endUsers: 100, interactions: 3000 },
  now = Date.now(),
): DemoData {
  const rng = createRng(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(rng() * items.length)]!;

  const products: DemoProduct[] = [];
  const byCategory: number[][] = CATEGORIES.map(() => []);
  for (let i = 0; i < sizes.products; i++) {
    const c = i % CATEGORIES.length;
    const spec = CATEGORIES[c]!;
    const brand = pick(spec.brands);
    const noun = pick(spec.nouns);
    const [min, max] = spec.price;
    // Log-uniform prices: many affordable items, a few expensive ones, as in real catalogues.
    const price = Math.round(min * (max / min) ** rng() * 100) / 100;
    const color = pick(COLORS);
    byCategory[c]!.push(i);
    products.push({
      externalId: `${DEMO_PREFIX}p-${String(i + 1).padStart(4, "0")}`,
      name: `${brand} ${pick(ADJECTIVES)} ${noun}`,
      description: `${noun} by ${brand} in ${color}, from the demo catalogue.`,
      price,
      category: spec.path,
      brand,
      inStock: rng() > 0.08,
      attributes: { color, demo: true },
    });
  }

  const endUsers: DemoEndUser[] = [];
  const favourites: number[][] = [];
  const budget: number[] = [];
  for (let u = 0; u < sizes.endUsers; u++) {
    const first = Math.floor(rng() * CATEGORIES.length);
    const cats =
      rng() < 0.5
        ? [first]
        : [first, (first + 1 + Math.floor(rng() * (CATEGORIES.length - 1))) % CATEGORIES.length];
    favourites.push(cats);
    budget.push(0.3 + rng() * 0.7);
    const spec = CATEGORIES[cats[0]!]!;
    endUsers.push({
      externalId: `${DEMO_PREFIX}u-${String(u + 1).padStart(4, "0")}`,
      preferredCategories: cats.map((c) => CATEGORIES[c]!.path),
      priceRangeMin: spec.price[0],
      priceRangeMax: Math.round(spec.price[0] + (spec.price[1] - spec.price[0]) * budget[u]!),
    });
  }

  // Some users are far more active than others; within a category, early items are the popular ones.
  const activity = endUsers.map(() => 0.2 + rng() ** 2 * 3);
  const activityTotal = activity.reduce((a, b) => a + b, 0);
  const pickUser = (): number => {
    let r = rng() * activityTotal;
    for (let u = 0; u < activity.length; u++) {
      r -= activity[u]!;
      if (r <= 0) return u;
    }
    return activity.length - 1;
  };
  const pickInCategory = (c: number): number => {
    const items = byCategory[c]!;
    const rank = Math.min(items.length - 1, Math.floor(items.length * rng() ** 2.2));
    return items[rank]!;
  };

  const interactions: DemoInteraction[] = [];
  const horizonMs = 60 * 86_400_000;
  while (interactions.length < sizes.interactions) {
    const user = pickUser();
    const category = rng() < 0.8 ? pick(favourites[user]!) : Math.floor(rng() * CATEGORIES.length);
    const product = pickInCategory(category);
    const occurredAt = new Date(now - Math.floor(rng() * horizonMs));
    const affordable = products[product]!.price <= endUsers[user]!.priceRangeMax * 1.2;
    const steps: DemoInteraction["type"][] = ["VIEW"];
    if (rng() < 0.45) steps.push("CLICK");
    if (steps.length === 2 && rng() < (affordable ? 0.35 : 0.1)) steps.push("CART");
    if (steps.length === 3 && rng() < 0.55) steps.push("PURCHASE");
    if (steps.length === 4 && rng() < 0.5) steps.push("RATING");
    for (const [i, type] of steps.entries()) {
      if (interactions.length >= sizes.interactions) break;
      const value =
        type === "RATING"
          ? favourites[user]!.includes(category)
            ? 4 + Math.round(rng())
            : 3 + Math.round(rng())
          : 1;
      interactions.push({
        user,
        product,
        type,
        value,
        occurredAt: new Date(occurredAt.getTime() + i * 45_000),
      });
    }
  }
  return { products, endUsers, interactions };
}
