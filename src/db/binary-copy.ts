/**
 * A streaming reader of Postgres's binary COPY format (`copy … to stdout (format binary)`): an 11-byte
 * signature, flags and a header extension, then per row a 16-bit field count and per field a 32-bit length
 * (-1 for null) followed by that many bytes, and a field count of -1 as the trailer. The output may arrive
 * split anywhere; each field's bytes are handed over as they arrive instead of being gathered first.
 */

export interface BinaryCopyHandler {
  /** A field starts: its row and column (from 0) and its length in bytes (-1 for null). */
  field(row: number, column: number, length: number): void;
  /** The next bytes of the field last started, in order; a field may come in several pieces. */
  bytes(piece: Uint8Array): void;
}

/** "PGCOPY\n\xff\r\n\0" */
const SIGNATURE = [0x50, 0x47, 0x43, 0x4f, 0x50, 0x59, 0x0a, 0xff, 0x0d, 0x0a, 0x00];
const HEADER_BYTES = SIGNATURE.length + 8;
const WITH_OIDS_FLAG = 1 << 16;

type Phase = "header" | "extension" | "count" | "length" | "data" | "done";

export class BinaryCopyReader {
  private phase: Phase = "header";
  /** Fixed-size parts (header, field count, field length) gathered across pieces. */
  private readonly scratch = new Uint8Array(HEADER_BYTES);
  private readonly view = new DataView(this.scratch.buffer);
  private filled = 0;
  /** Bytes left of the current field or of the header extension. */
  private remaining = 0;
  private row = -1;
  private column = 0;
  private columns = 0;

  constructor(private readonly handler: BinaryCopyHandler) {}

  /** Rows read so far. */
  get rows(): number {
    return this.row + 1;
  }

  /** Whether the trailer has been read. */
  get done(): boolean {
    return this.phase === "done";
  }

  feed(piece: Uint8Array): void {
    let at = 0;
    while (at < piece.length) {
      if (this.phase === "data" || this.phase === "extension") {
        const take = Math.min(this.remaining, piece.length - at);
        if (this.phase === "data") this.handler.bytes(piece.subarray(at, at + take));
        at += take;
        this.remaining -= take;
        if (this.remaining === 0) {
          if (this.phase === "data") this.nextField();
          else this.phase = "count";
        }
        continue;
      }
      if (this.phase === "done") throw new Error("binary COPY output continues after its trailer");
      const size = this.phase === "header" ? HEADER_BYTES : this.phase === "count" ? 2 : 4;
      const take = Math.min(size - this.filled, piece.length - at);
      this.scratch.set(piece.subarray(at, at + take), this.filled);
      this.filled += take;
      at += take;
      if (this.filled === size) {
        this.filled = 0;
        this.fixedPart();
      }
    }
  }

  private fixedPart(): void {
    const view = this.view;
    if (this.phase === "header") {
      if (SIGNATURE.some((byte, i) => this.scratch[i] !== byte)) {
        throw new Error("not binary COPY output (signature mismatch)");
      }
      if ((view.getUint32(SIGNATURE.length) & WITH_OIDS_FLAG) !== 0) {
        throw new Error("binary COPY output with OIDs is not supported");
      }
      this.remaining = view.getUint32(SIGNATURE.length + 4);
      this.phase = this.remaining > 0 ? "extension" : "count";
    } else if (this.phase === "count") {
      const count = view.getInt16(0);
      if (count === -1) {
        this.phase = "done";
        return;
      }
      if (count < 0) throw new Error(`binary COPY output has a field count of ${count}`);
      this.row++;
      this.columns = count;
      this.column = 0;
      this.phase = count === 0 ? "count" : "length";
    } else {
      const length = view.getInt32(0);
      if (length < -1) throw new Error(`binary COPY output has a field length of ${length}`);
      this.handler.field(this.row, this.column, length);
      if (length > 0) {
        this.remaining = length;
        this.phase = "data";
      } else {
        this.nextField();
      }
    }
  }

  private nextField(): void {
    this.column++;
    this.phase = this.column < this.columns ? "length" : "count";
  }
}
