import type { ModelSignals } from "../../../engine/ranking/signals";
import type { Snapshot } from "../../../snapshots/types";
import type { ItemTable } from "./item-table";

/**
 * What a ranking reads for one account: the item table and, when a model is published, its signals (built by
 * service.ts, over snapshot-signals.ts when there is a model).
 */
export interface ServingView {
  table: ItemTable;
  /** null: the account has no published model; rank by popularity and catalogue order. */
  signals: ModelSignals | null;
  /** The published model's snapshot the view reads, when there is one. */
  snapshot?: Snapshot;
}
