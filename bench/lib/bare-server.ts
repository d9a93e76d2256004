/**
 * `bun bench/lib/bare-server.ts <port> <body file>`: the smallest HTTP server Bun runs, as a ceiling for the
 * serving rows. `GET` answers a tiny JSON body; `POST` reads the request's JSON and answers the file's bytes
 * as JSON. Measured with the same load generator on the same machine, it shows how much of a route's
 * distance from `GET /health` is the transport and the load generator's work on a larger response.
 */
import { readFileSync } from "node:fs";

const [port, file] = process.argv.slice(2);
if (port === undefined || file === undefined) {
  console.error("usage: bun bench/lib/bare-server.ts <port> <body file>");
  process.exit(2);
}
const body = readFileSync(file);
Bun.serve({
  port: Number(port),
  hostname: "127.0.0.1",
  async fetch(request) {
    if (request.method !== "POST") {
      return new Response('{"status":"ok"}', { headers: { "content-type": "application/json" } });
    }
    await request.json();
    return new Response(body, { headers: { "content-type": "application/json;charset=utf-8" } });
  },
});
