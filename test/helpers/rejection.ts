/**
 * The error a promise rejects with; fails when it resolves. Use it instead of `expect(promise).rejects` for
 * anything that waits on the embedded database: that runs on a worker thread, and bun:test's `.rejects` and
 * `.resolves` matchers never see a promise settled from a worker's message (oven-sh/bun#37189, #43819).
 */
export async function rejectionOf(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    return error instanceof Error ? error : new Error(String(error));
  }
  throw new Error("expected the promise to reject, and it resolved");
}
