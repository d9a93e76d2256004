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

/** RFC 4180 CSV: quoted fields may hold commas, quotes ("") and line breaks. */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = "";
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    if (quoted) {
      if (char === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (char === '"') quoted = false;
      else field += char;
    } else if (char === '"' && field === "") quoted = true;
    else if (char === ",") {
      row.push(field);
      field = "";
    } else if (char === "\n" || char === "\r") {
      if (char === "\r" && text[i + 1] === "\n") i++;
      row.push(field);
      if (row.some((cell) => cell !== "")) rows.push(row);
      row = [];
      field = "";
    } else field += char;
  }
  row.push(field);
  if (row.some((cell) => cell !== "")) rows.push(row);
  return rows;
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

function fromCsv(text: string): UploadRecord[] {
  const [header, ...rows] = parseCsv(text.replace(/^\uFEFF/, ""));
  if (header === undefined) return [];
  const names = header.map((name) => name.trim());
  return rows.map((cells) => {
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
}

function fromJson(text: string, kind: RecordKind): UploadRecord[] {
  const parsed = JSON.parse(text) as unknown;
  const list = Array.isArray(parsed) ? parsed : (parsed as Record<string, unknown> | null)?.[kind];
  if (!Array.isArray(list)) throw new Error(`The JSON file holds neither an array nor a "${kind}" array.`);
  return list as UploadRecord[];
}

export function readRecords(name: string, text: string, kind: RecordKind): UploadRecord[] {
  const json = /\.json$/i.test(name) || /^\s*[[{]/.test(text);
  try {
    return json ? fromJson(text, kind) : fromCsv(text);
  } catch (error) {
    throw new Error(`${name} could not be read: ${(error as Error).message}`);
  }
}

export function toBatches(records: UploadRecord[]): UploadRecord[][] {
  const batches: UploadRecord[][] = [];
  for (let at = 0; at < records.length; at += BATCH_SIZE) batches.push(records.slice(at, at + BATCH_SIZE));
  return batches;
}
