import { readFileSync } from "node:fs";
import { join } from "node:path";
import { EventType, type Interactions, type ItemMeta } from "../../src/engine/types";
import { EventColumns, IdMap, lines, splitCsvLine } from "./csv";

export interface LoadedDataset {
  name: string;
  events: Interactions;
  userIds: string[];
  itemIds: string[];
  items?: ItemMeta[];
  /** Rows skipped as malformed (e.g. a truncated last line). */
  skippedRows: number;
  /** The price listed for each item as found in the file (REES46), bad values included. */
  listedPrice?: Float64Array;
}

function finish(
  name: string,
  cols: EventColumns,
  users: IdMap,
  items: IdMap,
  skipped: number,
  withSession: boolean,
): LoadedDataset {
  const events: Interactions = {
    user: Int32Array.from(cols.user),
    item: Int32Array.from(cols.item),
    type: Uint8Array.from(cols.type),
    value: Float32Array.from(cols.value),
    ts: Float64Array.from(cols.ts),
    nUsers: users.size,
    nItems: items.size,
  };
  if (withSession) events.session = Int32Array.from(cols.session);
  return { name, events, userIds: users.ids, itemIds: items.ids, skippedRows: skipped };
}

/** MovieLens 100K: `u.data` (user \t item \t rating \t unix seconds); titles and genres from `u.item` if present. */
export function loadMovielens100k(dir: string): LoadedDataset {
  const users = new IdMap();
  const items = new IdMap();
  const cols = new EventColumns();
  let skipped = 0;
  for (const line of lines(readFileSync(join(dir, "u.data"), "utf8"))) {
    const f = line.split("\t");
    if (f.length < 4) {
      skipped++;
      continue;
    }
    cols.push(users.get(f[0]!), items.get(f[1]!), EventType.RATING, Number(f[2]), Number(f[3]) * 1000);
  }
  const ds = finish("movielens-100k", cols, users, items, skipped, false);
  try {
    const genres = lines(readFileSync(join(dir, "u.genre"), "latin1")).map((l) => l.split("|")[0]!);
    const meta: ItemMeta[] = items.ids.map(() => ({}));
    for (const line of lines(readFileSync(join(dir, "u.item"), "latin1"))) {
      const f = line.split("|");
      const idx = items.lookup(f[0]!);
      if (idx === undefined) continue;
      const flags = f.slice(5);
      const g = genres.filter((_, j) => flags[j] === "1");
      meta[idx] = {
        name: f[1] ?? "",
        categoryPath: (g[0] ?? "unknown").toLowerCase(),
        attributes: Object.fromEntries(g.map((x) => [`genre_${x}`, true])),
      };
    }
    ds.items = meta;
  } catch {
    // Metadata is optional: the interaction file alone is a valid data set.
  }
  return ds;
}

/** ml-latest-small: `ratings.csv` (userId,movieId,rating,timestamp; CRLF) and optional `movies.csv`. */
export function loadMovielensLatestSmall(dir: string): LoadedDataset {
  const users = new IdMap();
  const items = new IdMap();
  const cols = new EventColumns();
  let skipped = 0;
  const rows = lines(readFileSync(join(dir, "ratings.csv"), "utf8"));
  for (let i = 1; i < rows.length; i++) {
    const f = rows[i]!.split(",");
    if (f.length < 4 || f[3] === "") {
      skipped++;
      continue;
    }
    cols.push(users.get(f[0]!), items.get(f[1]!), EventType.RATING, Number(f[2]), Number(f[3]) * 1000);
  }
  const ds = finish("movielens-latest-small", cols, users, items, skipped, false);
  try {
    const meta: ItemMeta[] = items.ids.map(() => ({}));
    const movieRows = lines(readFileSync(join(dir, "movies.csv"), "utf8"));
    for (let i = 1; i < movieRows.length; i++) {
      const f = splitCsvLine(movieRows[i]!);
      const idx = items.lookup(f[0]!);
      if (idx === undefined) continue;
      const g = (f[2] ?? "").split("|");
      meta[idx] = {
        name: f[1] ?? "",
        categoryPath: (g[0] ?? "unknown").toLowerCase(),
        attributes: Object.fromEntries(g.map((x) => [`genre_${x}`, true])),
      };
    }
    ds.items = meta;
  } catch {
    // Optional, as above.
  }
  return ds;
}

const REES_TYPES: Record<string, number> = {
  view: EventType.VIEW,
  cart: EventType.CART,
  purchase: EventType.PURCHASE,
};

/**
 * REES46 event CSV. A row is skipped unless it has all 9 fields, a known event type and a parsable time
 * (the sample's last line is cut mid-row). Non-positive prices are bad input: the event is kept, the price is not.
 */
export function loadRees46(file: string): LoadedDataset {
  const users = new IdMap();
  const items = new IdMap();
  const sessions = new IdMap();
  const cols = new EventColumns();
  const meta: ItemMeta[] = [];
  const listed: number[] = [];
  let skipped = 0;
  const rows = lines(readFileSync(file, "utf8"));
  for (let i = 1; i < rows.length; i++) {
    const f = rows[i]!.split(",");
    const type = REES_TYPES[f[1] ?? ""];
    const ts = Date.parse((f[0] ?? "").replace(" UTC", "Z").replace(" ", "T"));
    if (f.length !== 9 || type === undefined || Number.isNaN(ts) || f[8] === "" || f[7] === "") {
      skipped++;
      continue;
    }
    const item = items.get(f[2]!);
    if (item === meta.length) {
      const price = Number(f[6]);
      const m: ItemMeta = {
        categoryPath: (f[4] ?? "").split(".").filter(Boolean).join("/") || `category_${f[3]}`,
      };
      if (f[5]) m.brand = f[5];
      if (price > 0) m.price = price;
      meta.push(m);
      listed.push(price);
    }
    cols.push(users.get(f[7]!), item, type, 1, ts, sessions.get(f[8]!));
  }
  const ds = finish("rees46", cols, users, items, skipped, true);
  ds.items = meta;
  ds.listedPrice = Float64Array.from(listed);
  return ds;
}

export const REAL_DATASETS = ["movielens-100k", "movielens-latest-small", "rees46"] as const;
export type RealDatasetName = (typeof REAL_DATASETS)[number];

/** Loads one of the shared real data sets from the folder that holds them. */
export function loadRealDataset(datasetsDir: string, name: RealDatasetName): LoadedDataset {
  if (name === "movielens-100k") return loadMovielens100k(join(datasetsDir, "movielens-100k"));
  if (name === "movielens-latest-small")
    return loadMovielensLatestSmall(join(datasetsDir, "movielens-latest-small"));
  return loadRees46(join(datasetsDir, "rees46-ecommerce-multicategory-sample", "2019-Oct.csv"));
}
