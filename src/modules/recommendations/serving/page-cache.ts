/**
 * Answers already computed, served again while nothing they were computed from has changed. An answer is
 * a pure function of the request, the end user's cached history, the serving view (table and signals), the
 * table's items revision, the tuning and (for category listings) the products newer than the snapshot, so an
 * entry records exactly those and is used only when all of them
 * are still the same objects and values: a recorded interaction (a new history object, in this process or
 * through the cross-process history sync), a newly published model (a new view), a catalogue change written
 * into the snapshot (a new revision) or a history reloaded after its TTL each make the next request rank
 * afresh. Nothing is served from here that the ranker would not answer at that moment.
 *
 * Entries are kept in least-recently-used order within a byte budget, and an erased end user's entries are
 * dropped at once. While the cache is under half its budget an answer is kept on its first computation: a
 * shop's users come back within minutes, and their second request is then answered from here. Past half, an
 * answer is admitted on its second computation within a while, not its first: many fresh answers are asked
 * for once (a new context, a history that changes with every interaction), and keeping each of them would
 * only churn the cache and the garbage collector's old generation. A key whose kept answer went stale (its
 * end user interacted, say) has shown that it is asked for again, so its recomputation is admitted at once:
 * after a shop's end user views a product, their next request is ranked once, not twice.
 */
import type { ServingTuning } from "../../../engine/ranking/candidates";
import { LruMap } from "../../../shared/lru-map";
import type { RankedBody } from "../schemas";
import type { UserHistory } from "./history-cache";
import type { ServingView } from "./view";

/** A recommendation answer ready to send (respond.ts renders it): its body and what the log records. */
export interface RenderedPage {
  endpoint: string;
  endUserId: number | null;
  itemIds: readonly string[];
  body: RankedBody;
  /** Approximate size of the body and its JSON text in bytes (the page cache's budget). */
  bytes: number;
}

/** What an answer was computed from; all must still hold for the entry to be served. */
export interface PageInputs {
  history: UserHistory | null;
  view: ServingView;
  tuning: ServingTuning;
  /** Products newer than the view's snapshot, for listings that merge them in (the same list object). */
  newer?: readonly unknown[];
}

interface Entry {
  history: UserHistory | null;
  newer: readonly unknown[] | undefined;
  table: ServingView["table"];
  signals: ServingView["signals"];
  revision: number;
  tuning: string;
  page: RenderedPage;
  bytes: number;
}

/** Total size of the cached response bodies (plus a fixed overhead per entry). */
const DEFAULT_BUDGET_BYTES = 32 * 2 ** 20;
const ENTRY_OVERHEAD_BYTES = 256;
/** Keys remembered as asked for once: two generations of up to this many each. */
const SEEN_PER_GENERATION = 50_000;
/** Below this share of the budget an answer is kept on its first computation: there is room for it. */
const ROOM_SHARE = 0.5;

const tuningKey = (tuning: ServingTuning) => `${tuning.candidateMinItems}/${tuning.selectiveMaxItems}`;

export class PageCache {
  private readonly entries = new LruMap<string, Entry>();
  private bytes = 0;
  /**
   * Checksums of keys computed once and not admitted yet, in two generations (the older one is dropped when
   * the newer fills up). Checksums rather than keys: nothing about an end user's request is kept here, so
   * erasure has nothing to clear; two keys sharing one only means an answer is admitted a computation early.
   */
  private seen = new Set<number>();
  private seenBefore = new Set<number>();
  /** Moves whenever entries are dropped for an erasure or a deleted account (see `cachedPlannedPage`). */
  private dropsSoFar = 0;

  constructor(private readonly budgetBytes = DEFAULT_BUDGET_BYTES) {}

  /**
   * The key of one request: the account, the end user ("" for routes without one), the route and every
   * input that shapes the answer (body and query, serialised by the caller).
   */
  static key(accountId: number, externalUserId: string, route: string, request: string): string {
    return `${accountId}\u0000${externalUserId}\u0000${route}\u0000${request}`;
  }

  get(key: string, inputs: PageInputs): RenderedPage | undefined {
    const entry = this.entries.peek(key);
    if (entry === undefined) return undefined;
    const { view } = inputs;
    if (
      entry.history !== inputs.history ||
      entry.newer !== inputs.newer ||
      entry.table !== view.table ||
      entry.signals !== view.signals ||
      entry.revision !== view.table.revision() ||
      entry.tuning !== tuningKey(inputs.tuning)
    ) {
      this.remove(key, entry);
      // Asked for again after it was kept: its recomputation is admitted at once (see `offer`).
      this.seen.add(Bun.hash.crc32(key));
      return undefined;
    }
    this.entries.get(key);
    return entry.page;
  }

  set(key: string, inputs: PageInputs, page: RenderedPage): void {
    const bytes = page.bytes + key.length + ENTRY_OVERHEAD_BYTES;
    if (bytes > this.budgetBytes / 16) return;
    const previous = this.entries.peek(key);
    if (previous !== undefined) this.remove(key, previous);
    this.entries.set(key, {
      history: inputs.history,
      newer: inputs.newer,
      table: inputs.view.table,
      signals: inputs.view.signals,
      revision: inputs.view.table.revision(),
      tuning: tuningKey(inputs.tuning),
      page,
      bytes,
    });
    this.bytes += bytes;
    while (this.bytes > this.budgetBytes) {
      const [oldest, entry] = this.entries.oldest()!;
      this.remove(oldest, entry);
    }
  }

  /**
   * Stores a freshly computed answer while the cache has room, or if it was computed for the same key before
   * (see the admission note above); returns whether it was stored.
   */
  offer(key: string, inputs: PageInputs, page: RenderedPage): boolean {
    const checksum = Bun.hash.crc32(key);
    const once = !this.seen.has(checksum) && !this.seenBefore.has(checksum);
    if (once && this.bytes >= this.budgetBytes * ROOM_SHARE) {
      if (this.seen.size >= SEEN_PER_GENERATION) {
        this.seenBefore = this.seen;
        this.seen = new Set();
      }
      this.seen.add(checksum);
      return false;
    }
    this.seen.delete(checksum);
    this.seenBefore.delete(checksum);
    this.set(key, inputs, page);
    return true;
  }

  /** An erased end user: nothing computed for them stays in memory. */
  dropEndUser(accountId: number, externalUserId: string): void {
    this.dropPrefix(`${accountId}\u0000${externalUserId}\u0000`);
  }

  dropAccount(accountId: number): void {
    this.dropPrefix(`${accountId}\u0000`);
  }

  /** How many times entries were dropped for an erasure, a deleted account or a clear. */
  get drops(): number {
    return this.dropsSoFar;
  }

  clear(): void {
    this.dropsSoFar++;
    this.entries.clear();
    this.bytes = 0;
    this.seen.clear();
    this.seenBefore.clear();
  }

  get size(): number {
    return this.entries.size;
  }

  private dropPrefix(prefix: string): void {
    this.dropsSoFar++;
    for (const [key, entry] of this.entries.entries()) if (key.startsWith(prefix)) this.remove(key, entry);
  }

  private remove(key: string, entry: Entry): void {
    this.entries.delete(key);
    this.bytes -= entry.bytes;
  }
}

/** The cached answer when its inputs still hold, else `compute()`'s, offered to the cache. */
export function cachedPage(
  cache: PageCache,
  key: string,
  inputs: PageInputs,
  compute: () => RenderedPage,
): RenderedPage {
  const hit = cache.get(key, inputs);
  if (hit !== undefined) return hit;
  const page = compute();
  cache.offer(key, inputs, page);
  return page;
}

/**
 * `cachedPage` for an answer computed from a plan in two steps: `prepare(plan)` may start work the answer
 * waits for (a ranking's searches, run off the request thread) and `render(plan)` computes it. When there is
 * work to wait for, the plan is made again once it is done, so the answer is computed from the data as it is
 * then (a catalogue change may have come in meanwhile), as the cache entry will record. A plan that is not
 * `cacheable` is answered without being offered to the cache, and so is an answer whose wait saw entries
 * dropped (an end user erased, an account deleted): computed from what was read before, it must not be kept
 * after the erasure.
 */
export function cachedPlannedPage<Plan>(
  cache: PageCache,
  key: string,
  inputs: PageInputs,
  plan: () => Plan,
  prepare: (plan: Plan) => Promise<void> | null,
  render: (plan: Plan) => RenderedPage,
  cacheable: (plan: Plan) => boolean = () => true,
): RenderedPage | Promise<RenderedPage> {
  const hit = cache.get(key, inputs);
  if (hit !== undefined) return hit;
  const drops = cache.drops;
  const offered = (planned: Plan) => {
    const page = render(planned);
    if (cacheable(planned) && cache.drops === drops) cache.offer(key, inputs, page);
    return page;
  };
  const first = plan();
  const waiting = prepare(first);
  if (waiting === null) return offered(first);
  return waiting.then(() => offered(plan()));
}
