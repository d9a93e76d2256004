import { describe, expect, test } from "bun:test";
import { embeddedStartParams } from "../../src/db/client";
import { RemotePglite } from "../../src/db/pglite-remote";
import { exitWhenStoreLost, STORE_LOST_EXIT_CODE } from "../../src/db/store-lost";
import { createLogger } from "../../src/shared/logger";
import { rejectionOf } from "../helpers/rejection";

/** Ends the embedded store's thread from outside, as a crash of that thread would. */
function killThread(remote: RemotePglite): void {
  (remote as unknown as { worker: Worker }).worker.terminate();
}

async function until(condition: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!condition()) {
    if (performance.now() > deadline) throw new Error("timed out waiting");
    await Bun.sleep(10);
  }
}

describe("the embedded store lost while open", () => {
  test("is reported once, and the statements waiting on it and after it fail", async () => {
    const remote = await RemotePglite.open("memory://", embeddedStartParams());
    const lost: Error[] = [];
    remote.onLost((error) => lost.push(error));
    expect((await remote.query<{ x: number }>("select 1 as x")).rows[0]?.x).toBe(1);
    const waiting = rejectionOf(remote.query("select pg_sleep(5)"));
    await Bun.sleep(50);
    killThread(remote);
    await until(() => lost.length > 0);
    expect(lost).toHaveLength(1);
    expect(lost[0]).toBeInstanceOf(Error);
    expect(await waiting).toBeInstanceOf(Error);
    expect(remote.closed).toBe(true);
    expect(await rejectionOf(remote.query("select 1"))).toBeInstanceOf(Error);
    await Bun.sleep(50);
    expect(lost).toHaveLength(1);
  });

  test("closing the store is not a loss", async () => {
    const remote = await RemotePglite.open("memory://", embeddedStartParams());
    const lost: Error[] = [];
    remote.onLost((error) => lost.push(error));
    await remote.query("select 1");
    await remote.close();
    await Bun.sleep(100);
    expect(remote.closed).toBe(true);
    expect(lost).toHaveLength(0);
  });

  test("ends the process with its own exit code, saying why", async () => {
    const remote = await RemotePglite.open("memory://", embeddedStartParams());
    const lines: string[] = [];
    const exits: number[] = [];
    exitWhenStoreLost(
      { onLost: (handler) => remote.onLost(handler) },
      createLogger("info", (line) => lines.push(line)),
      (code) => exits.push(code),
    );
    killThread(remote);
    await until(() => exits.length > 0);
    expect(exits).toEqual([STORE_LOST_EXIT_CODE]);
    const logged = JSON.parse(lines.find((line) => line.includes("embedded database stopped")) ?? "{}");
    expect(logged.level).toBe("error");
    expect(logged.exitCode).toBe(STORE_LOST_EXIT_CODE);
  });
});
