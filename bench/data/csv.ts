/** Splits one CSV line honouring double quotes (RFC 4180 style, "" as an escaped quote). */
export function splitCsvLine(line: string): string[] {
  if (!line.includes('"')) return line.split(",");
  const out: string[] = [];
  let cur = "";
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i]!;
    if (quoted) {
      if (ch === '"' && line[i + 1] === '"') {
        cur += '"';
        i++;
      } else if (ch === '"') quoted = false;
      else cur += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ",") {
      out.push(cur);
      cur = "";
    } else cur += ch;
  }
  out.push(cur);
  return out;
}

/** Lines without their terminators; tolerates CRLF and a missing final newline. */
export function lines(text: string): string[] {
  const out = text.split("\n");
  for (let i = 0; i < out.length; i++) {
    const l = out[i]!;
    if (l.endsWith("\r")) out[i] = l.slice(0, -1);
  }
  if (out.length > 0 && out[out.length - 1] === "") out.pop();
  return out;
}

/** Maps external ids to dense indices in first-seen order. */
export class IdMap {
  readonly ids: string[] = [];
  private readonly index = new Map<string, number>();
  get(id: string): number {
    let i = this.index.get(id);
    if (i === undefined) {
      i = this.ids.length;
      this.index.set(id, i);
      this.ids.push(id);
    }
    return i;
  }
  lookup(id: string): number | undefined {
    return this.index.get(id);
  }
  get size(): number {
    return this.ids.length;
  }
}

/** Growable column store for events, finished into typed arrays. */
export class EventColumns {
  user: number[] = [];
  item: number[] = [];
  type: number[] = [];
  value: number[] = [];
  ts: number[] = [];
  session: number[] = [];
  push(user: number, item: number, type: number, value: number, ts: number, session = -1): void {
    this.user.push(user);
    this.item.push(item);
    this.type.push(type);
    this.value.push(value);
    this.ts.push(ts);
    this.session.push(session);
  }
}
