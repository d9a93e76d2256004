/**
 * Adapts a tenant snapshot (src/snapshots) to the recommender's ItemTable and ModelSignals.
 */
import type { Snapshot } from "../../snapshots/types";
import type { ItemTable } from "./item-table";
import type { ServingView } from "./service";

const views = new WeakMap<Snapshot, ServingView>();

export function snapshotView(snapshot: Snapshot): ServingView {
  let view = views.get(snapshot);
  if (view === undefined) {
    view = { table: snapshotTable(snapshot), signals: null };
    views.set(snapshot, view);
  }
  return view;
}

function snapshotTable(snapshot: Snapshot): ItemTable {
  const items = snapshot.items;
  return {
    size: items.count,
    externalIds: items.externalIds,
    names: items.names,
    prices: items.prices,
    categories: items.categories,
    brands: items.brands,
    inStock: items.inStock,
    deleted: items.deleted,
    rating: items.meanRating,
    attributes: async () => [],
    popularity: new Float32Array(items.count),
    indexOf: items.indexByExternalId,
  };
}
