/**
 * The serving bench's workloads: (a)–(d) as requests for wrk, each measured run and its warm-up drawn with
 * different seeds, and the goal each row is held to.
 */
import { createRng } from "../../src/engine/rng";
import type { SyntheticDataset } from "../data/synthetic";
import type { LoadRequest } from "../lib/load";
import { productId, userId } from "../lib/records";
import { formatNumber } from "../lib/table";

export const R = "/api/v1/recommendations";

export interface Goal {
  /** Least share of /health throughput. */
  minShare?: number;
  /** Largest p99 latency, ms. */
  maxP99Ms?: number;
}

export interface Workload {
  key: string;
  label: string;
  requests: LoadRequest[];
  /** Different requests of the same shape, sent unrecorded before the measured run. */
  warmup: LoadRequest[];
  /**
   * Sent once each, unrecorded, before the workload's first warm-up: every user's first request, so that the
   * rows measure users the service has seen (a shop's steady traffic); first requests are row (e)'s.
   */
  firstRequests?: LoadRequest[];
  /**
   * After the first requests, the warm-up requests are sent for the size's `settle` seconds, unrecorded,
   * before the first measured run: a shop's service answers such traffic for hours, and the first seconds of
   * it are not its steady state. The process is still compiling the ranking's code then (its JIT threads
   * held 14% of a core 13-20 s into the shop mix, 3% at 40 s), and a user's page is kept from its second
   * computation on, so each user's second request is ranked afresh once. Measured straight after the first
   * requests, (b) read about two thirds of what the plain runs of the same traffic after it read.
   */
  settles?: boolean;
  goal?: Goal;
  /**
   * Measured for the size's `goalSeconds` instead of its `seconds` (with its /health run as long): the rows
   * with throughput goals of random users, where a few seconds hold neither the periodic work (history
   * rereads, answer-log writes, full collections) nor a 20% change apart from a shared host's noise.
   */
  long?: boolean;
}

export function routeOf(path: string): string {
  const bare = path.split("?")[0] as string;
  if (bare.startsWith(`${R}/products/external/`))
    return `${R}/products/external/{external_product_id}/similar`;
  if (bare.startsWith(`${R}/category/`)) return `${R}/category/{category}`;
  return bare;
}

export const personalised = (user: string, extra: Record<string, unknown> = {}): LoadRequest => ({
  method: "POST",
  path: `${R}/personalized/query`,
  body: JSON.stringify({ external_user_id: user, limit: 20, ...extra }),
});

export function shuffled<T>(items: T[], rng: () => number): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(rng() * (i + 1));
    [items[i], items[j]] = [items[j] as T, items[i] as T];
  }
  return items;
}

/** (a)–(d): each workload's measured and warm-up requests are drawn with different seeds. */
export function workloads(data: SyntheticDataset, nCategories: number): Workload[] {
  const { nUsers, nItems } = data.events;
  const categoryPaths = [...new Set((data.items ?? []).map((m) => m.categoryPath as string))];
  const make = (count: number, seed: number, one: (rng: () => number) => LoadRequest) => {
    const rng = createRng(seed);
    return Array.from({ length: count }, () => one(rng));
  };
  const user = (rng: () => number) => userId(Math.floor(rng() * nUsers));
  const product = (rng: () => number) => productId(Math.floor(rng() * nItems));
  const N = 50_000;
  const both = (seed: number, one: (rng: () => number) => LoadRequest) => ({
    requests: make(N, seed, one),
    warmup: make(N, seed + 1000, one),
  });
  const shopMix = (rng: () => number): LoadRequest =>
    rng() < 0.1
      ? {
          method: "POST",
          path: "/api/v1/interactions/",
          body: JSON.stringify({
            external_user_id: user(rng),
            external_product_id: product(rng),
            interaction_type: "VIEW",
          }),
        }
      : personalised(user(rng));
  const preset = (path: string, limit: number) => (rng: () => number) => ({
    method: "POST" as const,
    path: path.replace("{p}", product(rng)).replace("{q}", product(rng)),
    body: JSON.stringify({ external_user_id: user(rng), limit }),
  });
  return [
    {
      key: "repeatedUser",
      label: "(a) personalised, one user repeated",
      requests: [personalised(userId(0))],
      warmup: [personalised(userId(0))],
      goal: { minShare: 0.8 },
    },
    {
      key: "shopMix",
      label: `(b) shop mix: personalised for random users of ${formatNumber(nUsers)}, 10% VIEW writes`,
      ...both(1, shopMix),
      // The first row of random users: before it, each of them asks once (rows (c) and (d) follow it).
      firstRequests: Array.from({ length: nUsers }, (_, i) => personalised(userId(i))),
      settles: true,
      goal: { minShare: 0.5, maxP99Ms: 10 },
      long: true,
    },
    {
      key: "categoryFilter",
      label: `(c) personalised, random user, filter = one random category (1/${nCategories})`,
      ...both(3, (rng) =>
        personalised(user(rng), {
          filters: {
            logic: "and",
            filters: [
              {
                field: "category",
                op: "eq",
                value: categoryPaths[Math.floor(rng() * categoryPaths.length)],
              },
            ],
          },
        }),
      ),
      goal: { minShare: 0.5, maxP99Ms: 10 },
      long: true,
    },
    {
      key: "homepage",
      label: "(d) ecommerce/homepage, random users",
      ...both(5, preset(`${R}/ecommerce/homepage`, 12)),
    },
    {
      key: "productPage",
      label: "(d) ecommerce/product-page, random users and products",
      ...both(7, preset(`${R}/ecommerce/product-page?current_product_id={p}`, 8)),
    },
    {
      key: "cart",
      label: "(d) ecommerce/cart, random users and carts",
      ...both(9, preset(`${R}/ecommerce/cart?cart_items={p}&cart_items={q}`, 6)),
    },
    {
      key: "checkout",
      label: "(d) ecommerce/checkout, random users",
      ...both(13, preset(`${R}/ecommerce/checkout?order_value=120`, 4)),
    },
    {
      key: "similar",
      label: "(d) products/external/{id}/similar, random products",
      ...both(15, (rng) => ({
        method: "GET" as const,
        path: `${R}/products/external/${product(rng)}/similar?limit=20`,
      })),
    },
  ];
}
