import { describe, expect, test } from "bun:test";
import { Slots } from "../../src/shared/slots";

/** A task that finishes when its `finish` is called, recording when it started. */
function gate(started: number[], n: number) {
  let finish: () => void = () => {};
  const done = new Promise<void>((resolve) => {
    finish = resolve;
  });
  return {
    task: async () => {
      started.push(n);
      await done;
      return n;
    },
    finish: () => finish(),
  };
}

describe("slots", () => {
  test("runs at most `size` tasks at once and the rest in the order they asked", async () => {
    const slots = new Slots(2);
    const started: number[] = [];
    const gates = [0, 1, 2, 3, 4].map((n) => gate(started, n));
    const results = gates.map((g) => slots.run(g.task));
    await Bun.sleep(0);
    expect(started).toEqual([0, 1]);
    expect(slots.running).toBe(2);
    expect(slots.waiting).toBe(3);

    gates[1]!.finish();
    await Bun.sleep(0);
    expect(started).toEqual([0, 1, 2]);
    expect(slots.running).toBe(2);

    // A task arriving now waits behind those already waiting.
    const late = gate(started, 5);
    const lateResult = slots.run(late.task);
    gates[0]!.finish();
    gates[2]!.finish();
    await Bun.sleep(0);
    expect(started).toEqual([0, 1, 2, 3, 4]);

    for (const g of [gates[3]!, gates[4]!, late]) g.finish();
    expect(await Promise.all([...results, lateResult])).toEqual([0, 1, 2, 3, 4, 5]);
    expect(slots.running).toBe(0);
    expect(slots.waiting).toBe(0);
  });

  test("a failing task frees its slot and its error reaches its caller", async () => {
    const slots = new Slots(1);
    const failed = slots.run(async () => {
      throw new Error("decode failed");
    });
    const next = slots.run(async () => "next");
    await expect(failed).rejects.toThrow("decode failed");
    expect(await next).toBe("next");
    expect(slots.running).toBe(0);
  });

  test("refuses a size that admits no task", () => {
    expect(() => new Slots(0)).toThrow(RangeError);
    expect(() => new Slots(1.5)).toThrow(RangeError);
  });
});
