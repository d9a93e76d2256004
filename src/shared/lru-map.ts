/**
 * A map that remembers use order, for the caches on the serving path. A plain `Map` re-inserted on every
 * hit keeps LRU order too, but finding its oldest entry (`keys().next()`) walks past every slot deleted
 * before it: under steady churn that was tens of µs per eviction. Here the order is a linked list, so
 * every operation is constant time.
 */
interface Node<K, V> {
  key: K;
  value: V;
  older: Node<K, V> | null;
  newer: Node<K, V> | null;
}

export class LruMap<K, V> {
  private readonly nodes = new Map<K, Node<K, V>>();
  private oldestNode: Node<K, V> | null = null;
  private newestNode: Node<K, V> | null = null;

  get size(): number {
    return this.nodes.size;
  }

  /** The value, now the most recently used. */
  get(key: K): V | undefined {
    const node = this.nodes.get(key);
    if (node === undefined) return undefined;
    if (node !== this.newestNode) {
      this.unlink(node);
      this.append(node);
    }
    return node.value;
  }

  /** The value, leaving the order as it is. */
  peek(key: K): V | undefined {
    return this.nodes.get(key)?.value;
  }

  /** Stores the value as the most recently used (replacing any under the same key). */
  set(key: K, value: V): void {
    const existing = this.nodes.get(key);
    if (existing !== undefined) {
      existing.value = value;
      if (existing !== this.newestNode) {
        this.unlink(existing);
        this.append(existing);
      }
      return;
    }
    const node: Node<K, V> = { key, value, older: null, newer: null };
    this.nodes.set(key, node);
    this.append(node);
  }

  delete(key: K): boolean {
    const node = this.nodes.get(key);
    if (node === undefined) return false;
    this.nodes.delete(key);
    this.unlink(node);
    return true;
  }

  /** The least recently used entry. */
  oldest(): [K, V] | undefined {
    const node = this.oldestNode;
    return node === null ? undefined : [node.key, node.value];
  }

  clear(): void {
    this.nodes.clear();
    this.oldestNode = null;
    this.newestNode = null;
  }

  /** Entries from the least to the most recently used; deleting the current one while iterating is safe. */
  *entries(): IterableIterator<[K, V]> {
    for (let node = this.oldestNode; node !== null; ) {
      const next = node.newer;
      yield [node.key, node.value];
      node = next;
    }
  }

  private append(node: Node<K, V>): void {
    node.older = this.newestNode;
    node.newer = null;
    if (this.newestNode !== null) this.newestNode.newer = node;
    else this.oldestNode = node;
    this.newestNode = node;
  }

  private unlink(node: Node<K, V>): void {
    if (node.older !== null) node.older.newer = node.newer;
    else this.oldestNode = node.newer;
    if (node.newer !== null) node.newer.older = node.older;
    else this.newestNode = node.older;
    node.older = null;
    node.newer = null;
  }
}
