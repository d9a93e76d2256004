import { sql } from "drizzle-orm";
import type { Database, DbOrTx } from "../../db/client";

export interface DataCounts {
  products: number;
  endUsers: number;
  interactions: number;
  models: number;
  jobs: number;
}

export async function countAccountData(
  deps: { readonly database: Database },
  accountId: number,
  on?: DbOrTx,
  includeDeletedProducts = false,
): Promise<DataCounts> {
  const deletedFilter = includeDeletedProducts ? sql`` : sql` and deleted_at is null`;
  const [row] = await deps.database.rows<Record<keyof DataCounts, number | string>>(
    sql`select
          (select count(*) from products where account_id = ${accountId}${deletedFilter}) as "products",
          (select count(*) from end_users where account_id = ${accountId}) as "endUsers",
          (select count(*) from interactions where account_id = ${accountId}) as "interactions",
          (select count(*) from models where account_id = ${accountId}) as "models",
          (select count(*) from training_jobs where account_id = ${accountId})
            + (select count(*) from ingestion_jobs where account_id = ${accountId}) as "jobs"`,
    on,
  );
  return {
    products: Number(row?.products ?? 0),
    endUsers: Number(row?.endUsers ?? 0),
    interactions: Number(row?.interactions ?? 0),
    models: Number(row?.models ?? 0),
    jobs: Number(row?.jobs ?? 0),
  };
}
