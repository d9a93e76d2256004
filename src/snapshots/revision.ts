/**
 * A counter per snapshot that moves whenever its item arrays are written in place (freshness refresh,
 * in-process deletion), so serving caches derived from those arrays (eligibility masks, category orders)
 * know when to rebuild without comparing the arrays themselves.
 */
import type { Snapshot } from "./types";

const revisions = new WeakMap<Snapshot, number>();

export function itemsRevision(snapshot: Snapshot): number {
  return revisions.get(snapshot) ?? 0;
}

export function bumpItemsRevision(snapshot: Snapshot): void {
  revisions.set(snapshot, (revisions.get(snapshot) ?? 0) + 1);
}
