import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { getPriority } from "node:os";

/** Nice value of each of this process's live threads, by thread id (Linux /proc). */
function threadNiceValues(): Map<string, number> {
  const out = new Map<string, number>();
  for (const tid of readdirSync("/proc/self/task")) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/self/task/${tid}/stat`, "utf8");
    } catch {
      // A thread that ended between the listing and the read (another test's worker, a runtime helper).
      continue;
    }
    // Fields after the command name: state is field 3, nice is field 19.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    out.set(tid, Number(fields[16]));
  }
  return out;
}

describe.if(process.platform === "linux")("background threads", () => {
  test("a worker that lowers its priority runs at nice 10; the thread that answers requests keeps its own", async () => {
    const before = threadNiceValues();
    const mainNice = getPriority(0);
    const source = `
      import { lowerThisThreadsPriority } from ${JSON.stringify(`${import.meta.dir}/../../src/shared/background-thread.ts`)};
      lowerThisThreadsPriority();
      const { getPriority } = await import("node:os");
      postMessage(getPriority(0));
      setInterval(() => {}, 1000);`;
    const file = `${import.meta.dir}/.background-thread-${process.pid}.ts`;
    await Bun.write(file, source);
    const worker = new Worker(file);
    try {
      const seen = await new Promise<number>((resolve, reject) => {
        worker.onmessage = (event) => resolve(event.data as number);
        worker.onerror = (event) => reject(new Error(event.message));
      });
      expect(seen).toBe(10);
      expect(getPriority(0)).toBe(mainNice);
      const lowered = [...threadNiceValues()].filter(([tid, nice]) => !before.has(tid) && nice === 10);
      expect(lowered.length).toBeGreaterThanOrEqual(1);
      // The main thread's id is the process id.
      expect(threadNiceValues().get(String(process.pid))).toBe(mainNice);
    } finally {
      worker.terminate();
      await Bun.file(file).delete();
    }
  });
});
