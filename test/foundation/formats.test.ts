import { describe, expect, test } from "bun:test";
import { FormatRegistry } from "@sinclair/typebox";
import { createApp } from "../../src/app";

describe("string formats", () => {
  test("uuid is checked by one compiled pattern (Zod's), the registration that stays once the app is loaded", () => {
    expect(typeof createApp).toBe("function");
    const check = FormatRegistry.Get("uuid");
    expect(check).toBeDefined();
    for (const valid of [
      "550e8400-e29b-41d4-a716-446655440000",
      "6BA7B810-9DAD-11D1-80B4-00C04FD430C8",
      "00000000-0000-0000-0000-000000000000",
      "ffffffff-ffff-ffff-ffff-ffffffffffff",
    ])
      expect(check!(valid)).toBe(true);
    for (const invalid of [
      "",
      "not-a-uuid",
      "550e8400-e29b-41d4-a716-44665544000",
      "550e8400-e29b-91d4-a716-446655440000",
      "550e8400-e29b-41d4-c716-446655440000",
      " 550e8400-e29b-41d4-a716-446655440000",
    ])
      expect(check!(invalid)).toBe(false);
    // The generator's version builds a Zod schema per call; this one is a plain function of the value.
    expect(check!.toString()).not.toContain("string3");
  });
});
