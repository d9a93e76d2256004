import { and, desc, eq } from "drizzle-orm";
import type { Database } from "../../db/client";
import { orders, products, recommendationAttributions, recommendationLogs, searches } from "../../db/schema";
import { notFound } from "../../shared/errors";
import type { AttributionQueue } from "../analytics/attribution-queue";
import { endUserInteractionsQuery } from "../interactions/queries";
import { toInteraction } from "../interactions/record";
import type { RecommendationService } from "../recommendations/serving/service";
import { endUserLookupQuery } from "./queries";
import { toEndUser } from "./record";
import type { EndUserExport } from "./schemas";

/**
 * Right of access: the end-user record and every interaction, search, recommendation, order and attribution
 * kept about them, read in one repeatable-read transaction so the parts are consistent with each other. Recommendation
 * logs and attributions still queued in this process are written first: the export holds everything recorded before it.
 */
export async function exportEndUser({
  ctx,
  deps,
  input,
}: {
  ctx: { readonly accountId: number };
  deps: {
    readonly database: Database;
    readonly recommendations: RecommendationService;
    readonly attributions: AttributionQueue;
  };
  input: { externalId: string };
}): Promise<EndUserExport> {
  const accountId = ctx.accountId;
  await deps.recommendations.logs.flush();
  await deps.attributions.flush();
  return deps.database.db.transaction(
    async (tx) => {
      const [user] = await endUserLookupQuery(tx, accountId, input.externalId);
      if (user === undefined) throw notFound("End user");
      const [interactionRows, searchRows, orderRows, recommendationRows, attributionRows] = [
        await endUserInteractionsQuery(tx, accountId, user.id),
        await tx
          .select({
            query: searches.query,
            externalProductId: products.externalId,
            occurredAt: searches.occurredAt,
          })
          .from(searches)
          .leftJoin(products, eq(products.id, searches.productId))
          .where(and(eq(searches.accountId, accountId), eq(searches.endUserId, user.id)))
          .orderBy(desc(searches.occurredAt)),
        await tx
          .select({
            externalProductId: products.externalId,
            quantity: orders.quantity,
            unitPrice: orders.unitPrice,
            occurredAt: orders.occurredAt,
          })
          .from(orders)
          .leftJoin(products, eq(products.id, orders.productId))
          .where(and(eq(orders.accountId, accountId), eq(orders.endUserId, user.id)))
          .orderBy(desc(orders.occurredAt)),
        await tx
          .select({
            recommendationId: recommendationLogs.recommendationId,
            endpoint: recommendationLogs.endpoint,
            items: recommendationLogs.items,
            createdAt: recommendationLogs.createdAt,
          })
          .from(recommendationLogs)
          .where(and(eq(recommendationLogs.accountId, accountId), eq(recommendationLogs.endUserId, user.id)))
          .orderBy(desc(recommendationLogs.createdAt)),
        await tx
          .select({
            recommendationId: recommendationAttributions.recommendationId,
            externalProductId: products.externalId,
            position: recommendationAttributions.position,
            interactionType: recommendationAttributions.interactionType,
            revenue: recommendationAttributions.revenue,
            endpoint: recommendationAttributions.endpoint,
            occurredAt: recommendationAttributions.occurredAt,
          })
          .from(recommendationAttributions)
          .leftJoin(products, eq(products.id, recommendationAttributions.productId))
          .where(
            and(
              eq(recommendationAttributions.accountId, accountId),
              eq(recommendationAttributions.endUserId, user.id),
            ),
          )
          .orderBy(desc(recommendationAttributions.occurredAt)),
      ];
      return {
        endUser: toEndUser(user),
        interactions: interactionRows.map(toInteraction),
        searches: searchRows.map((r) => ({
          query: r.query,
          external_product_id: r.externalProductId,
          timestamp: r.occurredAt.toISOString(),
        })),
        orders: orderRows.map((r) => ({
          external_product_id: r.externalProductId,
          quantity: r.quantity,
          unit_price: r.unitPrice,
          timestamp: r.occurredAt.toISOString(),
        })),
        recommendations: recommendationRows.map((r) => ({
          recommendation_id: r.recommendationId,
          endpoint: r.endpoint,
          items: JSON.parse(r.items) as string[],
          timestamp: r.createdAt.toISOString(),
        })),
        attributions: attributionRows.map((r) => ({
          recommendation_id: r.recommendationId,
          external_product_id: r.externalProductId,
          position: r.position,
          interaction_type: r.interactionType,
          revenue: r.revenue,
          endpoint: r.endpoint,
          timestamp: r.occurredAt.toISOString(),
        })),
        exportedAt: new Date().toISOString(),
      };
    },
    { isolationLevel: "repeatable read", accessMode: "read only" },
  );
}
