/**
 * A synchronous in-process event bus. Each app builds its own (src/app-events.ts), so two apps in one
 * process never hear each other. Listeners run right after the change committed: they must be cheap, and
 * one that throws is skipped so it cannot fail a write that already happened or keep the others from running.
 */
export class EventBus<T> {
  private readonly listeners = new Set<(event: T) => void>();

  /** Subscribes; returns the unsubscribe function. */
  on(listener: (event: T) => void): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  emit(event: T): void {
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch {
        // A faulty cache listener must not fail the write, nor keep the other listeners from running.
      }
    }
  }
}
