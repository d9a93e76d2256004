import { describe, expect, test } from "bun:test";
import { PageBudget, type PageMark } from "../../src/snapshots/page-budget";

/** A mark `ms` in the past, on both clocks (a page that held the thread that long). */
function markAgo(ms: number): PageMark {
  const { user, system } = process.cpuUsage();
  return { wall: performance.now() - ms, cpu: (user + system) / 1000 - ms };
}

describe("page budget", () => {
  test("a slow page shrinks the next one towards the budget, never below the minimum", () => {
    const pages = new PageBudget({ initial: 1_000, min: 100, max: 10_000, budgetMs: 10 });
    pages.took(markAgo(50), 1_000); // 0.05 ms a row → 200 rows fit 10 ms
    expect(pages.rows).toBeGreaterThanOrEqual(100);
    expect(pages.rows).toBeLessThan(300);
    pages.took(markAgo(1_000), 200);
    expect(pages.rows).toBe(100);
  });

  test("a fast page at most doubles the next one, up to the maximum", () => {
    const pages = new PageBudget({ initial: 1_000, min: 100, max: 3_000, budgetMs: 10 });
    pages.took(markAgo(0), 1_000);
    expect(pages.rows).toBe(2_000);
    pages.took(markAgo(0), 2_000);
    expect(pages.rows).toBe(3_000);
  });

  test("waiting for a core is not counted: the lesser of wall and CPU time sizes the page", () => {
    const pages = new PageBudget({ initial: 1_000, min: 100, max: 10_000, budgetMs: 10 });
    const { user, system } = process.cpuUsage();
    // A second of wall time, none of it on a core: the page was cheap, the machine was busy.
    pages.took({ wall: performance.now() - 1_000, cpu: (user + system) / 1000 }, 1_000);
    expect(pages.rows).toBe(2_000);
  });
});
