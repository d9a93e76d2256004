/** The dashboard's reading of uploaded files into bulk-ingestion records (src/web/dashboard/upload-file.ts). */
import { describe, expect, test } from "bun:test";
import {
  BATCH_SIZE,
  parseCsv,
  readRecords,
  readUploadFile,
  toBatches,
} from "../../src/web/dashboard/upload-file";

describe("upload files", () => {
  test("CSV: quoted commas, doubled quotes, line breaks inside quotes, CRLF and a BOM", () => {
    expect(parseCsv('a,b\r\n"x, y","say ""hi"""\n"two\nlines",z\n')).toEqual([
      ["a", "b"],
      ["x, y", 'say "hi"'],
      ["two\nlines", "z"],
    ]);
    const [record] = readRecords(
      "p.csv",
      "\uFEFFexternalId,name,price,category\nsku,Kettle,25,kitchen\n",
      "products",
    );
    expect(record).toEqual({ externalId: "sku", name: "Kettle", price: 25, category: "kitchen" });
  });

  test("CSV columns become the route's types: numbers, booleans, |-lists and attributes.<key>", () => {
    const products = readRecords(
      "p.csv",
      "externalId,name,price,category,inStock,attributes.color,brand\nsku,Kettle,25.5,kitchen,false,red,\n",
      "products",
    );
    expect(products).toEqual([
      {
        externalId: "sku",
        name: "Kettle",
        price: 25.5,
        category: "kitchen",
        inStock: false,
        attributes: { color: "red" },
      },
    ]);
    const users = readRecords(
      "u.csv",
      "externalId,preferredCategories,priceRangeMax\nu1,books| music,40\n",
      "users",
    );
    expect(users).toEqual([{ externalId: "u1", preferredCategories: ["books", "music"], priceRangeMax: 40 }]);
    const interactions = readRecords(
      "i.csv",
      "external_user_id,external_product_id,interaction_type,value\nu1,sku,view,1\n",
      "interactions",
    );
    expect(interactions).toEqual([
      { external_user_id: "u1", external_product_id: "sku", interaction_type: "view", value: 1 },
    ]);
  });

  test("JSON: an array, or an object holding the kind's array; anything else is a sentence", () => {
    expect(readRecords("a.json", '[{"externalId":"u1"}]', "users")).toEqual([{ externalId: "u1" }]);
    expect(readRecords("b.json", '{"users":[{"externalId":"u2"}]}', "users")).toEqual([{ externalId: "u2" }]);
    expect(() => readRecords("c.json", '{"products":[]}', "users")).toThrow(
      'c.json could not be read: The JSON file holds neither an array nor a "users" array.',
    );
    expect(() => readRecords("d.json", "[{", "users")).toThrow(/^d\.json could not be read/);
  });

  test("records are sent in batches of at most 1,000", () => {
    const records = Array.from({ length: 2 * BATCH_SIZE + 1 }, (_, i) => ({ externalId: `u${i}` }));
    expect(toBatches(records).map((batch) => batch.length)).toEqual([BATCH_SIZE, BATCH_SIZE, 1]);
    expect(toBatches([])).toEqual([]);
  });

  test("each record knows where it is in the file: its CSV line (quoted line breaks and blank lines counted) or JSON position", () => {
    const csv = 'externalId,name\r\na,"two\nlines"\n\nb,x\r\n"c",y\n';
    const file = readUploadFile("p.csv", csv, "products");
    expect(file.records.map((record) => record.externalId)).toEqual(["a", "b", "c"]);
    expect([0, 1, 2].map(file.placeOf)).toEqual(["line 2", "line 5", "line 6"]);
    const json = readUploadFile("u.json", '[{"externalId":"u1"},{}]', "users");
    expect(json.placeOf(1)).toBe("record 2");
  });
});
