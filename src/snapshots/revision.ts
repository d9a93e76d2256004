/**
 * The items revision of a snapshot (see DerivedState): moves whenever its item arrays are written in place,
 * so serving caches derived from those arrays (eligibility masks, category orders) know when to rebuild
 * without comparing the arrays themselves.
 */
import type { Snapshot } from "./types";

export function itemsRevision(snapshot: Snapshot): number {
  return snapshot.derived.itemsRevision();
}

export function bumpItemsRevision(snapshot: Snapshot): void {
  snapshot.derived.bumpItemsRevision();
}
