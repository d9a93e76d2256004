/**
 * At most `size` tasks run at once; the others wait for a free slot in the order they asked. A finishing
 * task hands its slot straight to the next waiter, so a task arriving meanwhile cannot jump the queue.
 */
export class Slots {
  #running = 0;
  readonly #waiting: (() => void)[] = [];

  constructor(readonly size: number) {
    if (!Number.isInteger(size) || size < 1) throw new RangeError("slots: size must be a positive integer");
  }

  /** Tasks holding a slot now. */
  get running(): number {
    return this.#running;
  }

  /** Tasks waiting for a slot now. */
  get waiting(): number {
    return this.#waiting.length;
  }

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.#running < this.size) this.#running++;
    else await new Promise<void>((resolve) => this.#waiting.push(resolve));
    try {
      return await task();
    } finally {
      const next = this.#waiting.shift();
      if (next !== undefined) next();
      else this.#running--;
    }
  }
}
