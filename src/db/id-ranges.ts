/**
 * Pages of one account's rows as id ranges (`id >= from and id < to`), for the large reads that run while the
 * service answers requests (training data, a snapshot's catalogue). Each page is a bounded range scan of the
 * (account_id, id) index, whatever the planner's statistics say. "id > cursor order by id limit k" is not:
 * right after a bulk load the planner expects a hundred rows and scans every row past the cursor, then sorts
 * them. On PGlite with 100k products that cost ~100 ms per page, of the thread every statement waits for, for
 * every page; a 2,000-row range page costs ~10 ms.
 *
 * The bounds are min(id) and max(id), two index probes; no count(*), which reads every row. Ids are shared by
 * all accounts of a table, so the span of a page adapts to the account's density: a page with less than
 * half the wanted rows doubles the next span, one with more than twice halves it.
 */
import { sql } from "drizzle-orm";
import type { Database } from "./client";

export type PagedTable = "products" | "end_users" | "interactions";

export interface IdRange {
  readonly from: number;
  /** Exclusive. */
  readonly to: number;
}

export class IdRangePages {
  private span: number;
  private from: number;

  private constructor(
    private readonly lo: number,
    private readonly hi: number,
    private readonly rowsPerPage: number,
  ) {
    this.span = rowsPerPage;
    this.from = lo;
  }

  /** The account's rows of `table` as of now; rows added later (ids above the current maximum) are not read. */
  static async of(
    database: Database,
    table: PagedTable,
    accountId: number,
    rowsPerPage: number,
  ): Promise<IdRangePages> {
    const [bounds] = await database.rows<{ lo: number | null; hi: number | null }>(sql`
      select min(id)::float8 as lo, max(id)::float8 as hi from ${sql.identifier(table)}
      where account_id = ${accountId}`);
    const lo = bounds?.lo === null || bounds?.lo === undefined ? 1 : Number(bounds.lo);
    const hi = bounds?.hi === null || bounds?.hi === undefined ? 0 : Number(bounds.hi);
    return new IdRangePages(lo, hi, rowsPerPage);
  }

  /** The next range to read, or undefined when every id up to the maximum has been covered. */
  next(): IdRange | undefined {
    if (this.from > this.hi) return undefined;
    const range = { from: this.from, to: Math.min(this.hi + 1, this.from + this.span) };
    this.from = range.to;
    return range;
  }

  /** Reports how many rows the last range held; sizes the next one. */
  took(rows: number): void {
    if (rows > 2 * this.rowsPerPage) this.span = Math.max(1, Math.floor(this.span / 2));
    else if (rows < this.rowsPerPage / 2) this.span *= 2;
  }

  /** Share of the id span read so far, 0..1 (for progress reports). */
  get done(): number {
    const total = this.hi - this.lo + 1;
    return total <= 0 ? 1 : Math.min(1, (this.from - this.lo) / total);
  }
}
