/**
 * The OpenAPI description, served at OPENAPI_PATH, and its documentation page. The operations come from
 * each route's own schemas (`@elysiajs/openapi`'s generator); this module then makes the document say what
 * the service does, which the generator alone gets wrong in ways client generators and validators reject:
 *
 * - Elysia's query/path `t.Integer` is a transform that also accepts numeric strings; the generator prints
 *   it as `anyOf(string, integer)`, so a generated client types `total` as `string | number`. The wire
 *   carries integers, so the document says `integer` (and `number` for `t.Numeric`, `boolean` for
 *   `t.BooleanString`).
 * - Bodiless answers (204, 303) come out with an invalid `content: {"type": "void"}`: they get none.
 * - Every body is marked required, and advertised as form and multipart too; the service reads JSON only,
 *   and a `t.Optional(...)` body may be left out.
 * - Error answers: each route's statuses and codes (openapi-errors.ts).
 *
 * Built once per route table and cached: the document is over half a megabyte.
 */
import { toOpenAPISchema } from "@elysiajs/openapi";
import { Elysia } from "elysia";
import { registerHotFormats } from "./formats";
import { bodyIsOptional, errorResponses, type RouteShape } from "./openapi-errors";
import { DOCUMENTED_AS } from "./schema-types";

// After the generator's own format registrations, which this module's imports have just run.
registerHotFormats();

export const OPENAPI_PATH = "/api/v1/public-openapi.json";
export const DOCS_PATH = "/api/v1/docs";

type Json = Record<string, unknown>;

export interface DocumentInfo {
  title: string;
  version: string;
  description: string;
  serverUrl: string;
}

/** The generator's input: the finished app (its routes and global definitions). */
export type GeneratorApp = Parameters<typeof toOpenAPISchema>[0];

export function openapiDocumentModule(info: DocumentInfo, app: () => GeneratorApp) {
  let cached: { routes: number; document: Json } | undefined;
  const document = () => {
    const built = app();
    const routes = (built as unknown as { routes: RouteShape[] }).routes;
    if (cached?.routes !== routes.length) {
      cached = { routes: routes.length, document: buildDocument(info, built, routes) };
    }
    return cached.document;
  };
  return new Elysia({ name: "openapi-document" })
    .get(OPENAPI_PATH, () => document(), { detail: { hide: true } })
    .get(
      DOCS_PATH,
      () => new Response(docsPage(info), { headers: { "content-type": "text/html; charset=utf-8" } }),
      {
        detail: { hide: true },
      },
    );
}

export function buildDocument(info: DocumentInfo, app: GeneratorApp, routes: readonly RouteShape[]): Json {
  const generated = toOpenAPISchema(app, undefined, undefined, undefined, "3.1.2") as unknown as {
    paths: Record<string, Record<string, Json>>;
    components: { schemas: Json };
  };
  const paths = generated.paths;
  for (const route of routes) {
    const operation = paths[openapiPath(route.path)]?.[route.method.toLowerCase()];
    if (operation === undefined) continue;
    finishOperation(operation, route);
  }
  return tightenSchemas({
    openapi: "3.1.2",
    info: { title: info.title, version: info.version, description: info.description },
    servers: [{ url: info.serverUrl }],
    paths,
    components: {
      schemas: generated.components.schemas,
      securitySchemes: {
        ApiKey: { type: "apiKey", in: "header", name: "X-API-Key" },
        BearerJWT: { type: "http", scheme: "bearer", bearerFormat: "JWT" },
      },
    },
  }) as Json;
}

/** `/a/:id/b` → `/a/{id}/b`, as the generator keys paths. */
const openapiPath = (path: string): string => path.replace(/:([^/]+)/g, "{$1}");

function finishOperation(operation: Json, route: RouteShape): void {
  const responses = (operation.responses ?? {}) as Record<string, Json>;
  for (const response of Object.values(responses)) {
    const content = response.content as Json | undefined;
    // A media-type map has "type/subtype" keys; the generator's bodiless answers put a schema there instead.
    if (content !== undefined && Object.keys(content).some((key) => !key.includes("/")))
      delete response.content;
  }
  const redirect = responses["303"];
  if (redirect !== undefined) {
    redirect.headers = {
      Location: { description: "Where the browser goes next", schema: { type: "string" } },
    };
  }
  for (const [status, response] of Object.entries(errorResponses(route))) {
    // A status the route declares with a body of its own (the readiness 503) stays the route's.
    const declared = responses[status] as { content?: Record<string, { schema?: Json }> } | undefined;
    const declaredSchema = declared?.content?.["application/json"]?.schema as
      | { properties?: Json }
      | undefined;
    if (declared === undefined || declaredSchema?.properties?.errorCode !== undefined) {
      responses[status] = response;
    }
  }
  operation.responses = responses;
  const body = operation.requestBody as { content?: Json; required?: boolean } | undefined;
  if (body?.content !== undefined) {
    const json = body.content["application/json"];
    if (json !== undefined) body.content = { "application/json": json };
    body.required = !bodyIsOptional(route);
  }
}

/** The string half of an Elysia coercing schema: `{type: "string", format: "integer" | "numeric" | "boolean"}`. */
const COERCED_FORMATS = new Set(["integer", "numeric", "boolean"]);
const isCoercedString = (value: unknown): boolean =>
  typeof value === "object" &&
  value !== null &&
  (value as Json).type === "string" &&
  COERCED_FORMATS.has((value as Json).format as string);

/**
 * Walks every schema: `anyOf([coerced string, T])` becomes T (keeping the outer keywords), and a `number`
 * that must be a multiple of 1 becomes an `integer`.
 */
function tightenSchemas(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(tightenSchemas);
  if (typeof value !== "object" || value === null) return value;
  const documentedAs = (value as Json)[DOCUMENTED_AS];
  if (documentedAs !== undefined) return tightenSchemas(documentedAs);
  let node: Json = {};
  for (const [key, child] of Object.entries(value as Json)) node[key] = tightenSchemas(child) as Json;
  const anyOf = node.anyOf;
  if (Array.isArray(anyOf) && anyOf.length === 2 && anyOf.some(isCoercedString)) {
    const typed = anyOf.find((branch) => !isCoercedString(branch)) as Json;
    const { anyOf: _, ...outer } = node;
    node = { ...outer, ...typed };
  }
  if (node.type === "number" && node.multipleOf === 1) {
    const { multipleOf: _, ...rest } = node;
    node = { ...rest, type: "integer" };
  }
  return node;
}

/** Scalar's API reference, reading the document above. */
const docsPage = (info: DocumentInfo): string => `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8" />
  <meta name="viewport" content="width=device-width, initial-scale=1" />
  <title>${escapeHtml(info.title)}</title>
</head>
<body>
  <script id="api-reference" data-url="${OPENAPI_PATH}"></script>
  <script src="https://cdn.jsdelivr.net/npm/@scalar/api-reference"></script>
</body>
</html>
`;

const escapeHtml = (text: string): string => text.replace(/[&<>"]/g, (char) => `&#${char.charCodeAt(0)};`);
