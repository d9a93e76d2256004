import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { GENERATED_TYPES, generateClientTypes } from "../../scripts/generate-client-types";

test("the client's committed types are those of the app's OpenAPI document (run `bun run generate:client`)", async () => {
  const committed = readFileSync(GENERATED_TYPES, "utf8");
  const fresh = await generateClientTypes();
  // Compared as a whole: a route added, removed or reshaped anywhere fails here, not in a shop's build.
  const a = committed.split("\n");
  const b = fresh.split("\n");
  const line = a.findIndex((text, i) => text !== b[i]);
  const firstDifference =
    line < 0 && a.length === b.length ? undefined : { line: line + 1, committed: a[line], fresh: b[line] };
  expect({ firstDifference }).toEqual({ firstDifference: undefined });
  expect(fresh).toContain('"/api/v1/recommendations/personalized/query"');
  expect(fresh).toContain('| "RATE_LIMITED"');
}, 60_000);
