import type { Cell, Table } from "./types";

/** Numbers right-aligned, text left-aligned; one blank line around each table. */
export function renderTable(table: Table): string {
  const cells = [table.columns, ...table.rows.map((row) => row.map(formatCell))];
  const widths = table.columns.map((_, c) => Math.max(...cells.map((row) => String(row[c] ?? "").length)));
  const numeric = table.columns.map(
    (_, c) =>
      table.rows.some((row) => typeof row[c] === "number") ||
      table.rows.every((row) => /^[\d.,x×%+-]+$/.test(String(row[c] ?? ""))),
  );
  const line = (row: Cell[]) =>
    row
      .map((cell, c) => {
        const text = String(cell ?? "");
        return numeric[c] ? text.padStart(widths[c]!) : text.padEnd(widths[c]!);
      })
      .join("  ")
      .trimEnd();
  const out = [`## ${table.title}`, line(table.columns), widths.map((w) => "-".repeat(w)).join("  ")];
  for (const row of cells.slice(1)) out.push(line(row));
  for (const note of table.notes ?? []) out.push(`  ${note}`);
  return out.join("\n");
}

function formatCell(cell: Cell): Cell {
  if (typeof cell !== "number") return cell ?? "";
  return formatNumber(cell);
}

/** Three significant digits for small values, thousands separators for large ones. */
export function formatNumber(value: number): string {
  if (!Number.isFinite(value)) return String(value);
  const abs = Math.abs(value);
  if (abs >= 1000) return Math.round(value).toLocaleString("en-US");
  if (abs >= 100) return value.toFixed(0);
  if (abs >= 10) return value.toFixed(1);
  if (abs >= 1) return value.toFixed(2);
  if (abs === 0) return "0";
  return value.toPrecision(3);
}

/** "0.53x": a measured value over its baseline. */
export function ratio(value: number | null | undefined, baseline: number | null | undefined): string {
  if (
    value == null ||
    baseline == null ||
    !Number.isFinite(value) ||
    !Number.isFinite(baseline) ||
    baseline === 0
  )
    return "-";
  const r = value / baseline;
  return `${r >= 10 ? r.toFixed(1) : r.toFixed(2)}x`;
}

export const seconds = (ms: number): number => ms / 1000;
