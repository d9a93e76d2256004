/** Interaction kinds; numeric values are stored in `Interactions.type` (Uint8Array). */
export const EventType = {
  VIEW: 0,
  CLICK: 1,
  CART: 2,
  PURCHASE: 3,
  RATING: 4,
  LIKE: 5,
  DISLIKE: 6,
  SEARCH: 7,
} as const;
export type EventType = (typeof EventType)[keyof typeof EventType];
export const EVENT_TYPE_COUNT = 8;

/** Column-oriented interaction log; users and items are dense indices in [0, nUsers) / [0, nItems). */
export interface Interactions {
  user: Int32Array;
  item: Int32Array;
  type: Uint8Array;
  value: Float32Array;
  /** Milliseconds since epoch. */
  ts: Float64Array;
  /** Optional session id per event (dense ints, -1 = none); used by co-occurrence. */
  session?: Int32Array;
  nUsers: number;
  nItems: number;
}

export interface ItemMeta {
  name?: string;
  description?: string;
  /** Slash-separated hierarchy such as "electronics/phones". */
  categoryPath?: string;
  brand?: string;
  price?: number;
  attributes?: Record<string, string | number | boolean>;
}

/** A user's recent history, as passed to fold-in and scoring. */
export interface History {
  items: Int32Array;
  weights: Float32Array;
}

export type ProgressFn = (stage: string, percent: number) => void;
