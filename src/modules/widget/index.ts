/**
 * What a shop's page loads: `GET /widget.js` (the drop-in widget, no authentication) and the product cards
 * the widget shows for a recommendation answer (a publishable key with `recommendations:read` may call it).
 */
import { Elysia, t } from "elysia";
import type { AppDeps } from "../../app-deps";
import { authPlugin } from "../../http/auth";
import { ELYSIA_CONFIG } from "../../http/kernel";
import type { ServiceModule } from "../module";
import { listProductCards } from "./list-cards";
import { ProductCards, ProductCardsQuery } from "./schemas";
import { widgetScript } from "./script";

/** Shops embed the unversioned URL, so a release reaches their pages within ten minutes; ETag saves the bytes. */
const SCRIPT_CACHE_CONTROL = "public, max-age=600";

function widgetRoutes(deps: AppDeps) {
  return new Elysia({ ...ELYSIA_CONFIG, name: "widget" })
    .use(authPlugin(deps))
    .get(
      "/widget.js",
      async ({ request }) => {
        const script = await widgetScript();
        const headers: Record<string, string> = {
          "content-type": "text/javascript; charset=utf-8",
          "cache-control": SCRIPT_CACHE_CONTROL,
          etag: script.etag,
          vary: "Accept-Encoding",
          "x-content-type-options": "nosniff",
        };
        if (request.headers.get("if-none-match") === script.etag) {
          return new Response(null, { status: 304, headers });
        }
        if (/\bgzip\b/.test(request.headers.get("accept-encoding") ?? "")) {
          return new Response(script.gzip, { headers: { ...headers, "content-encoding": "gzip" } });
        }
        return new Response(script.js, { headers });
      },
      {
        response: { 200: t.String({ description: "The widget script (JavaScript)." }) },
        detail: {
          tags: ["Widget"],
          summary: "The drop-in recommendations widget",
          description:
            'Embed with `<script src="…/widget.js" data-key="pk_live_…" async></script>` and place ' +
            '`<div data-recs="homepage" data-user="u42"></div>` where the carousel goes (modes: homepage, ' +
            "product-page with data-product, cart with data-cart, checkout, personalized). Cacheable ten " +
            "minutes, with an ETag; gzip when accepted.",
        },
      },
    )
    .get(
      "/api/v1/recommendations/product-cards",
      ({ tenant, query }) => listProductCards({ ctx: tenant, deps, input: { ids: query.ids } }),
      {
        auth: { mode: "keyOrJwt", scope: "recommendations:read" },
        query: ProductCardsQuery,
        response: { 200: ProductCards },
        detail: {
          tags: ["Recommendations"],
          summary: "Product cards to display recommendations",
          description:
            "Name, price, image (`image_url` attribute) and link (`url` attribute) of up to 100 products, in " +
            "the order asked: what a shop page shows for a recommendation answer. Unknown, deleted and other " +
            "accounts' ids are left out. Publishable keys with scope recommendations:read may call it.",
        },
      },
    );
}

export const widgetModule: ServiceModule = {
  name: "widget",
  routes: widgetRoutes,
};
