import { Elysia } from "elysia";
import type { AppDeps } from "../../app-deps";
import { authPlugin } from "../../http/auth";
import { ELYSIA_CONFIG } from "../../http/kernel";
import type { ServiceModule } from "../module";
import { recordUsage } from "../usage/record";
import { createInteraction } from "./create";
import { listInteractions } from "./list";
import { Interaction, InteractionCreate, InteractionListQuery, InteractionPage } from "./schemas";

const tags = ["Interactions"];

function interactionsRoutes(deps: AppDeps) {
  return new Elysia({ ...ELYSIA_CONFIG, name: "interactions", prefix: "/api/v1/interactions" })
    .use(authPlugin(deps))
    .get("/", ({ tenant, query }) => listInteractions({ ctx: tenant, deps, input: query }), {
      auth: { mode: "keyOrJwt" },
      query: InteractionListQuery,
      response: { 200: InteractionPage },
      detail: {
        tags,
        summary: "List interactions",
        description: "The account's interactions, most recently recorded first, as a pagination envelope.",
      },
    })
    .post(
      "/",
      async ({ tenant, body }) => {
        const interaction = await createInteraction({ ctx: tenant, deps, input: body });
        recordUsage(deps, tenant.accountId, { ingestedRecords: 1 });
        return interaction;
      },
      {
        auth: { mode: "keyOrJwt", scope: "interactions:write" },
        body: InteractionCreate,
        response: { 200: Interaction },
        detail: {
          tags,
          summary: "Record an interaction",
          description:
            "Records what an end user did with a product. Types VIEW, CLICK, CART, PURCHASE, RATING, LIKE, " +
            "DISLIKE, SEARCH in any letter case (stored upper-case). An unknown end user is created (and counts " +
            "against the plan's maxEndUsers: past it, 429 PLAN_LIMIT_EXCEEDED and nothing is written); an unknown " +
            "or deleted product answers 404. A PURCHASE also records an order (quantity 1, at its `value`, or " +
            "the product's price when none is sent), a SEARCH a search. A CLICK, CART or PURCHASE is credited to the recommendation " +
            "answer named by `recommendation_id` (when it showed the product), else to the latest answer that " +
            "showed the product to this end user within 24 hours; a PURCHASE's credited revenue is its `value`, " +
            "or the product's price when none is sent. Publishable keys with scope interactions:write may call it.",
        },
      },
    );
}

export const interactionsModule: ServiceModule = {
  name: "interactions",
  routes: interactionsRoutes,
};
