/**
 * A small generated tenant with structure a recommender can learn: users prefer one category and mostly
 * interact with its products, so personalised models beat popularity. Rows go straight into the store with
 * set-based inserts (fast); training itself always goes through the API.
 */
import { expect } from "bun:test";
import { sql } from "drizzle-orm";
import type { TestContext } from "../helpers/context";

export interface GeneratedTenant {
  products: string[];
  users: string[];
  interactions: number;
}

export interface GenerateOptions {
  categories?: number;
  productsPerCategory?: number;
  users?: number;
  interactionsPerUser?: number;
  seed?: number;
}

/** Deterministic PRNG (mulberry32) so every run trains on the same data. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export async function generateTenant(
  ctx: TestContext,
  accountId: number,
  options: GenerateOptions = {},
): Promise<GeneratedTenant> {
  const categories = options.categories ?? 4;
  const perCategory = options.productsPerCategory ?? 10;
  const nUsers = options.users ?? 40;
  const perUser = options.interactionsPerUser ?? 12;
  const random = rng(options.seed ?? 7);
  const db = ctx.deps.database;

  const products: string[] = [];
  const productValues = [];
  for (let c = 0; c < categories; c++) {
    for (let p = 0; p < perCategory; p++) {
      const externalId = `p-${c}-${p}`;
      products.push(externalId);
      productValues.push(
        sql`(${accountId}, ${externalId}, ${`Item ${p} of category ${c}`}, ${10 + p}, ${`cat${c}/sub${p % 2}`}, ${`brand${p % 3}`})`,
      );
    }
  }
  await db.rows(sql`insert into products (account_id, external_id, name, price, category, brand)
    values ${sql.join(productValues, sql`, `)}`);
  const users = Array.from({ length: nUsers }, (_, u) => `u-${u}`);
  await db.rows(sql`insert into end_users (account_id, external_id)
    values ${sql.join(
      users.map((u) => sql`(${accountId}, ${u})`),
      sql`, `,
    )}`);

  const types = ["VIEW", "VIEW", "VIEW", "CLICK", "CART", "PURCHASE"];
  const events = [];
  const now = Date.now();
  for (let u = 0; u < nUsers; u++) {
    const favourite = u % categories;
    for (let e = 0; e < perUser; e++) {
      const c = random() < 0.85 ? favourite : Math.floor(random() * categories);
      // Within a category, low product numbers are more popular.
      const p = Math.min(perCategory - 1, Math.floor(random() * random() * perCategory));
      const type = types[Math.floor(random() * types.length)]!;
      const at = new Date(now - Math.floor(random() * 30) * 86_400_000).toISOString();
      events.push({ user: users[u]!, product: `p-${c}-${p}`, type, at });
    }
  }
  await db.rows(sql`
    insert into interactions (account_id, end_user_id, product_id, interaction_type, value, occurred_at)
    select ${accountId}, eu.id, p.id, v.type, 1, v.at::timestamptz
    from (values ${sql.join(
      events.map((e) => sql`(${e.user}, ${e.product}, ${e.type}, ${e.at})`),
      sql`, `,
    )}) as v(user_ext, product_ext, type, at)
    join end_users eu on eu.account_id = ${accountId} and eu.external_id = v.user_ext
    join products p on p.account_id = ${accountId} and p.external_id = v.product_ext`);
  return { products, users, interactions: events.length };
}

/** Fast options for tests: few iterations and factors, no search over hyper-parameters. */
export const FAST_TRAINING = { factors: 8, iterations: 3, regularization: 0.1 } as const;

export interface JobStatusBody {
  jobId: number;
  taskId: string;
  status: "queued" | "running" | "completed" | "failed";
  progress: number;
  stage: string;
  error: string | null;
  finishedAt: string | null;
  modelId: number | null;
  metrics: Record<string, unknown> | null;
}

/** Polls the job until it is completed or failed (no timing assumptions beyond the test timeout). */
export async function waitForJob(ctx: TestContext, apiKey: string, jobId: number): Promise<JobStatusBody> {
  for (;;) {
    const res = await ctx.request<JobStatusBody>("GET", `/api/v1/pipeline/jobs/${jobId}/status`, { apiKey });
    expect(res.status).toBe(200);
    if (res.body.status === "completed" || res.body.status === "failed") return res.body;
    await Bun.sleep(50);
  }
}

export async function trainAndWait(
  ctx: TestContext,
  apiKey: string,
  body: Record<string, unknown> = FAST_TRAINING,
): Promise<JobStatusBody> {
  const res = await ctx.request("POST", "/api/v1/pipeline/train", { apiKey, body });
  expect(res.status).toBe(202);
  return waitForJob(ctx, apiKey, res.body.jobId);
}
