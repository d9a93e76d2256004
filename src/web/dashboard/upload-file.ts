/**
 * Turns an uploaded CSV or JSON file into the records of one bulk-ingestion kind, split into batches the
 * bulk route accepts (at most 1,000 records each). CSV headers name the fields of the route's records;
 * numbers and booleans are converted where the field expects them, lists are separated by "|".
 */
export type RecordKind = "products" | "users" | "interactions";
export type UploadRecord = Record<string, unknown>;

export const BATCH_SIZE = 1000;

const NUMBER_FIELDS = new Set(["price", "priceRangeMin", "priceRangeMax", "value"]);
const BOOLEAN_FIELDS = new Set(["inStock"]);
const LIST_FIELDS = new Set(["preferredCategories"]);

/** A CSV row with the line of the file it starts on (1-based; quoted fields may span lines). */
export interface CsvRow {
  cells: string[];
  line: number;
}

/** RFC 4180 CSV: quoted fields may hold commas, quotes ("") and line breaks. Blank rows are skipped. */
export function parseCsvRows(text: string): CsvRow[] {
  const rows: CsvRow[] = [];
  let row: string[] = [];
  let field = "";
  let quoted = false;
  let line = 1;
  let rowLine = 1;
  const endRow = () => {
    row.push(field);
    if (row.some((cell) => cell !== "")) rows.push({ cells: row, line: rowLine });
    row = [];
    field = "";
  };
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    if (quoted) {
      if (char === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (char === '"') quoted = false;
      else {
        field += char;
        if (char === "\n" || (char === "\r" && text[i + 1] !== "\n")) line++;
      }
    } else if (char === '"' && field === "") quoted = true;
    else if (char === ",") {
      row.push(field);
      field = "";
    } else if (char === "\n" || char === "\r") {
      if (char === "\r" && text[i + 1] === "\n") i++;
      endRow();
      line++;
      rowLine = line;
    } else field += char;
  }
  endRow();
  return rows;
}

export function parseCsv(text: string): string[][] {
  return parseCsvRows(text).map((row) => row.cells);
}

function convert(name: string, raw: string): unknown {
  if (NUMBER_FIELDS.has(name)) return raw.trim() === "" ? undefined : Number(raw);
  if (BOOLEAN_FIELDS.has(name)) return /^(true|1|yes)$/i.test(raw.trim());
  if (LIST_FIELDS.has(name))
    return raw
      .split("|")
      .map((one) => one.trim())
      .filter((one) => one !== "");
  if (name.startsWith("attributes.")) return raw;
  return raw === "" ? undefined : raw;
}

/** An uploaded file's records, and where each is in the file, for the rows it refused. */
export interface UploadFile {
  records: UploadRecord[];
  /** "line 12" for a CSV file (its header is line 1), "record 12" for a JSON array; `index` from 0. */
  placeOf: (index: number) => string;
}

function fromCsv(text: string): UploadFile {
  const [header, ...rows] = parseCsvRows(text.replace(/^\uFEFF/, ""));
  if (header === undefined) return { records: [], placeOf: () => "" };
  const names = header.cells.map((name) => name.trim());
  const records = rows.map(({ cells }) => {
    const record: UploadRecord = {};
    names.forEach((name, at) => {
      const value = convert(name, cells[at] ?? "");
      if (value === undefined) return;
      if (name.startsWith("attributes.")) {
        const attributes = (record.attributes ?? {}) as Record<string, unknown>;
        attributes[name.slice("attributes.".length)] = value;
        record.attributes = attributes;
      } else record[name] = value;
    });
    return record;
  });
  return { records, placeOf: (index) => `line ${rows[index]?.line ?? "?"}` };
}

function fromJson(text: string, kind: RecordKind): UploadFile {
  const parsed = JSON.parse(text) as unknown;
  const list = Array.isArray(parsed) ? parsed : (parsed as Record<string, unknown> | null)?.[kind];
  if (!Array.isArray(list)) throw new Error(`The JSON file holds neither an array nor a "${kind}" array.`);
  return { records: list as UploadRecord[], placeOf: (index) => `record ${index + 1}` };
}

export function readUploadFile(name: string, text: string, kind: RecordKind): UploadFile {
  const json = /\.json$/i.test(name) || /^\s*[[{]/.test(text);
  try {
    return json ? fromJson(text, kind) : fromCsv(text);
  } catch (error) {
    throw new Error(`${name} could not be read: ${(error as Error).message}`);
  }
}

export function readRecords(name: string, text: string, kind: RecordKind): UploadRecord[] {
  return readUploadFile(name, text, kind).records;
}

export function toBatches(records: UploadRecord[]): UploadRecord[][] {
  const batches: UploadRecord[][] = [];
  for (let at = 0; at < records.length; at += BATCH_SIZE) batches.push(records.slice(at, at + BATCH_SIZE));
  return batches;
}
