/**
 * The catalogue's read queries as drizzle builders, shared by the use cases and by the EXPLAIN test that
 * checks they run on the account-leading indexes.
 */
import { and, asc, count, eq, isNull, or, type SQL, sql } from "drizzle-orm";
import type { DbOrTx } from "../../db/client";
import { products } from "../../db/schema";

/**
 * Category `c` matches `c` itself and every `c/...` sub-category. The sub-category part is the byte range
 * ['c/', 'c0') ('0' is the byte after '/'), written with the text_pattern_ops operators so the
 * (account_id, category text_pattern_ops) index serves it even as a prepared statement with parameters,
 * where `LIKE $1` could not use the index; and no character of `c` is ever a wildcard.
 */
export function categoryMatches(category: string): SQL {
  return or(
    eq(products.category, category),
    and(sql`${products.category} ~>=~ ${`${category}/`}`, sql`${products.category} ~<~ ${`${category}0`}`),
  ) as SQL;
}

function listFilter(accountId: number, category: string | undefined): SQL {
  return and(
    eq(products.accountId, accountId),
    isNull(products.deletedAt),
    category === undefined ? undefined : categoryMatches(category),
  ) as SQL;
}

export function productPageQuery(
  db: DbOrTx,
  accountId: number,
  options: { category?: string | undefined; skip: number; limit: number },
) {
  return db
    .select()
    .from(products)
    .where(listFilter(accountId, options.category))
    .orderBy(asc(products.id))
    .offset(options.skip)
    .limit(options.limit);
}

export function productCountQuery(db: DbOrTx, accountId: number, category: string | undefined) {
  return db.select({ total: count() }).from(products).where(listFilter(accountId, category));
}

/** A live (not soft-deleted) product by external id. */
export function productLookupQuery(db: DbOrTx, accountId: number, externalId: string) {
  return db
    .select()
    .from(products)
    .where(
      and(eq(products.accountId, accountId), eq(products.externalId, externalId), isNull(products.deletedAt)),
    )
    .limit(1);
}
