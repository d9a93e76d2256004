/**
 * Sizes pages of rows so that each statement (and the work done on its rows) stays near a time budget. On
 * the embedded store every statement runs on the thread that answers requests, and the cost of a page
 * depends on the rows' width and on how busy the machine is: a fixed size that is harmless on a quiet host
 * held requests for over a second on a loaded one. Each page's measured time sets the next page's size.
 *
 * A page's time is the lesser of its wall time and the process's CPU time over it: on a machine whose
 * cores are shared with other work, wall time also counts the time this thread waited for a core, which
 * smaller pages do not shorten (they only lengthen the load). CPU time counts the process's other threads
 * too, which errs towards smaller pages.
 */
export class PageBudget {
  private size: number;

  constructor(
    private readonly options: {
      /** The first page's rows. */
      readonly initial: number;
      readonly min: number;
      readonly max: number;
      /** Target wall time of one page, in ms. */
      readonly budgetMs: number;
    },
  ) {
    this.size = clamp(options.initial, options.min, options.max);
  }

  /** Rows to ask for in the next page. */
  get rows(): number {
    return this.size;
  }

  /** Marks the start of a page (pass it to `took`). */
  start(): PageMark {
    return { wall: performance.now(), cpu: cpuMs() };
  }

  /** Records that a page begun at `mark` brought `rows` rows; the next page is sized to the budget (at most doubling). */
  took(mark: PageMark, rows: number): void {
    if (rows <= 0) return;
    const ms = Math.min(performance.now() - mark.wall, cpuMs() - mark.cpu);
    const perRow = Math.max(ms, 0.01) / rows;
    const target = this.options.budgetMs / perRow;
    this.size = clamp(Math.round(Math.min(target, 2 * this.size)), this.options.min, this.options.max);
  }
}

export interface PageMark {
  readonly wall: number;
  readonly cpu: number;
}

function cpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

function clamp(n: number, min: number, max: number): number {
  return Math.max(min, Math.min(max, n));
}
