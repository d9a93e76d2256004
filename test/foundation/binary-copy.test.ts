import { describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { BinaryCopyReader } from "../../src/db/binary-copy";
import { sharedTestContext, usingPostgres } from "../helpers/context";

type Field = { row: number; column: number; bytes: number[] | null };

/** A reader that keeps every field it reads, with its bytes. */
function collecting(): { reader: BinaryCopyReader; fields: Field[] } {
  const fields: Field[] = [];
  const reader = new BinaryCopyReader({
    field(row, column, length) {
      fields.push({ row, column, bytes: length === -1 ? null : [] });
    },
    bytes(piece) {
      fields.at(-1)!.bytes!.push(...piece);
    },
  });
  return { reader, fields };
}

/** Reads the whole output fed in pieces of `size` bytes; returns every field with its bytes. */
function readAll(output: Uint8Array, size: number): { fields: Field[]; rows: number; done: boolean } {
  const { reader, fields } = collecting();
  for (let at = 0; at < output.length; at += size) reader.feed(output.subarray(at, at + size));
  return { fields, rows: reader.rows, done: reader.done };
}

/** Binary COPY output as Postgres writes it: header (with an extension area), rows, trailer. */
function copyOutput(rows: (number[] | null)[][], extension: number[] = []): Uint8Array {
  const out: number[] = [0x50, 0x47, 0x43, 0x4f, 0x50, 0x59, 0x0a, 0xff, 0x0d, 0x0a, 0x00];
  const int = (value: number, bytes: number) => {
    for (let i = bytes - 1; i >= 0; i--) out.push((value >>> (8 * i)) & 0xff);
  };
  int(0, 4);
  int(extension.length, 4);
  out.push(...extension);
  for (const row of rows) {
    int(row.length, 2);
    for (const field of row) {
      int(field === null ? -1 : field.length, 4);
      if (field !== null) out.push(...field);
    }
  }
  int(0xffff, 2);
  return Uint8Array.from(out);
}

describe("binary COPY reader", () => {
  const rows = [
    [
      [0, 0, 0, 1],
      [1, 2, 3, 4, 5, 6, 7, 8, 9],
    ],
    [[0, 0, 0, 2], null],
    [[0, 0, 0, 3], []],
    [],
  ];
  const expected: Field[] = [
    { row: 0, column: 0, bytes: [0, 0, 0, 1] },
    { row: 0, column: 1, bytes: [1, 2, 3, 4, 5, 6, 7, 8, 9] },
    { row: 1, column: 0, bytes: [0, 0, 0, 2] },
    { row: 1, column: 1, bytes: null },
    { row: 2, column: 0, bytes: [0, 0, 0, 3] },
    { row: 2, column: 1, bytes: [] },
  ];

  test("reads every field of every row, however the output is split", () => {
    const output = copyOutput(rows, [9, 9, 9]);
    for (const size of [1, 2, 3, 5, 7, 19, 64, output.length]) {
      const read = readAll(output, size);
      expect(read.fields).toEqual(expected);
      expect(read.rows).toBe(4);
      expect(read.done).toBe(true);
    }
  });

  test("output cut short is not done; a wrong signature or bytes after the trailer are errors", () => {
    const output = copyOutput(rows);
    expect(readAll(output.subarray(0, output.length - 1), 4).done).toBe(false);
    const wrong = Uint8Array.from(output);
    wrong[0] = 0x51;
    expect(() => readAll(wrong, 8)).toThrow(/signature/);
    expect(() => readAll(Uint8Array.from([...output, 0]), 8)).toThrow(/after its trailer/);
  });

  test.skipIf(!usingPostgres())("reads Postgres's own output through copyOut", async () => {
    const { deps } = await sharedTestContext();
    const copyOut = deps.database.copyOut!;
    const { reader, fields: received } = collecting();
    await copyOut(
      `copy (select g::int4 as n, case when g = 2 then null else decode(repeat('ab', g * 3000), 'hex') end as b
             from generate_series(1, 3) g order by g) to stdout (format binary)`,
      (piece) => reader.feed(piece),
    );
    expect(reader.done).toBe(true);
    expect(received.map((f) => [f.row, f.column, f.bytes?.length ?? null])).toEqual([
      [0, 0, 4],
      [0, 1, 3000],
      [1, 0, 4],
      [1, 1, null],
      [2, 0, 4],
      [2, 1, 9000],
    ]);
    expect(received[4]!.bytes).toEqual([0, 0, 0, 3]);
    expect(received[5]!.bytes!.every((b) => b === 0xab)).toBe(true);

    // A piece the caller refuses fails the copy; the connection it ran on keeps working.
    const refused = copyOut("copy (select 1) to stdout (format binary)", () => {
      throw new Error("refused");
    });
    await expect(refused).rejects.toThrow("refused");
    for (let i = 0; i < 12; i++) {
      expect(await deps.database.rows<{ one: number }>(sql`select 1::int as one`)).toEqual([{ one: 1 }]);
    }
  });
});
