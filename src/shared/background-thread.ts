/**
 * Background threads (training, artifact decoding) run at a lower scheduling priority than the thread that
 * answers requests. On a host whose cores are all busy (a 2-core machine training one tenant while other
 * processes run), a fit at equal priority takes CPU time the serving thread waits for: /health answered in
 * 100–270 ms while a model trained. At nice 10 the scheduler gives the serving thread its share first; the
 * fit still takes every cycle nobody else wants.
 *
 * On Linux a thread's nice value is its own (setpriority on pid 0 changes the calling thread only), so this
 * is called at the start of a worker. Elsewhere it would lower the whole process, so it does nothing there.
 */
import { setPriority } from "node:os";

const BACKGROUND_NICE = 10;

export function lowerThisThreadsPriority(): void {
  if (process.platform !== "linux") return;
  try {
    setPriority(0, BACKGROUND_NICE);
  } catch {
    // Not permitted (a sandbox without setpriority): the thread keeps the process's priority.
  }
}
