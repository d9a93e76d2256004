/**
 * Where the embedded store's thread spends its time, by kind of statement: a profile for the thread the CPU
 * profiler does not see. Given a file (`EMBEDDED_STORE_TIMINGS`), that thread appends a JSON line four
 * times a second, `{"at": <epoch ms>, "statements": {"<label>": [count, ms], …}}`, holding what it ran since
 * the line before (nothing when it ran nothing). A statement's time runs from its turn on the thread to its
 * answer, so a statement that waited for an open transaction counts that wait too. Its label is the opening
 * of its text with whitespace folded: values travel as parameters, so one statement run with other values is
 * one kind, and no value is written. A write that fails (a full disk) ends the timings, never the store.
 */
import { appendFileSync } from "node:fs";

/** Characters of a statement's text its label keeps. */
const LABEL_LENGTH = 90;
const WRITE_EVERY_MS = 250;

/** The kind a statement's text is counted under. */
export function statementLabel(text: string): string {
  return text.replace(/\s+/g, " ").trim().slice(0, LABEL_LENGTH);
}

export class StatementTimings {
  readonly #kinds = new Map<string, [count: number, ms: number]>();
  /** Labels already made, by statement text: the texts repeat, their labels need not be made again. */
  readonly #labels = new Map<string, string>();
  readonly #timer: ReturnType<typeof setInterval>;
  #failed = false;

  constructor(
    private readonly write: (line: string) => void,
    private readonly now: () => number = Date.now,
    everyMs = WRITE_EVERY_MS,
  ) {
    this.#timer = setInterval(() => this.flush(), everyMs);
    this.#timer.unref?.();
  }

  record(text: string, ms: number): void {
    if (this.#failed) return;
    let label = this.#labels.get(text);
    if (label === undefined) {
      label = statementLabel(text);
      if (this.#labels.size >= 10_000) this.#labels.clear();
      this.#labels.set(text, label);
    }
    const kind = this.#kinds.get(label);
    if (kind === undefined) this.#kinds.set(label, [1, ms]);
    else {
      kind[0]++;
      kind[1] += ms;
    }
  }

  /** Writes what was recorded since the last line, if anything. */
  flush(): void {
    if (this.#kinds.size === 0) return;
    const statements = Object.fromEntries(this.#kinds);
    this.#kinds.clear();
    try {
      this.write(`${JSON.stringify({ at: this.now(), statements })}\n`);
    } catch {
      this.#failed = true;
      clearInterval(this.#timer);
    }
  }

  stop(): void {
    clearInterval(this.#timer);
    this.flush();
  }
}

/** Lines appended to the file. */
export function timingsFile(path: string): (line: string) => void {
  return (line) => appendFileSync(path, line);
}
