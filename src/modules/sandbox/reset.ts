import { and, eq, isNull } from "drizzle-orm";
import type { Database } from "../../db/client";
import {
  endUsers,
  ingestionJobs,
  interactions,
  models,
  products,
  recommendationAttributions,
  recommendationDailyMetrics,
  recommendationLogs,
  trainingJobs,
} from "../../db/schema";
import type { TenantContext } from "../../http/tenant";
import { AppError } from "../../shared/errors";
import type { Logger } from "../../shared/logger";
import { MODEL_PUBLISHED_CHANNEL } from "../../snapshots/model-published";
import { lockModelPublication } from "../../training/store-model";
import type { AttributionQueue } from "../analytics/attribution-queue";
import { FREE_PLAN } from "../plans/catalog";
import type { RecommendationService } from "../recommendations/serving/service";
import { countAccountData } from "./counts";
import type { ResetResultType } from "./schemas";

/**
 * Deletes the account's experimental data in one transaction: products, end users (their interactions,
 * searches, orders and recommendation logs go with them), models (with artifacts) and jobs.
 */
export async function resetSandbox({
  ctx,
  deps,
}: {
  ctx: TenantContext;
  deps: {
    readonly database: Database;
    readonly logger: Logger;
    readonly recommendations: RecommendationService;
    readonly attributions: AttributionQueue;
  };
}): Promise<ResetResultType> {
  if (ctx.account.plan !== FREE_PLAN) {
    throw new AppError("FREE_PLAN_ONLY", "Only FREE-plan accounts can reset their data through the sandbox");
  }
  const accountId = ctx.accountId;
  // Answers already served are written first, so none of them lands after the reset.
  await deps.recommendations.logs.flush();
  await deps.attributions.flush();
  const deleted = await deps.database.db.transaction(async (tx) => {
    // A training run that is storing its model finishes first and its model is deleted here; one that
    // stores later finds its job gone and keeps nothing.
    await lockModelPublication(tx, accountId);
    const counts = await countAccountData(deps, accountId, tx, true);
    await tx.delete(interactions).where(eq(interactions.accountId, accountId));
    await tx.delete(endUsers).where(eq(endUsers.accountId, accountId));
    // Answers for nobody in particular and the attributions have no end user's delete to go with.
    await tx
      .delete(recommendationLogs)
      .where(and(eq(recommendationLogs.accountId, accountId), isNull(recommendationLogs.endUserId)));
    await tx.delete(recommendationAttributions).where(eq(recommendationAttributions.accountId, accountId));
    await tx.delete(recommendationDailyMetrics).where(eq(recommendationDailyMetrics.accountId, accountId));
    await tx.delete(products).where(eq(products.accountId, accountId));
    await tx.delete(models).where(eq(models.accountId, accountId));
    await tx.delete(trainingJobs).where(eq(trainingJobs.accountId, accountId));
    await tx.delete(ingestionJobs).where(eq(ingestionJobs.accountId, accountId));
    return counts;
  });
  // This process forgets the account's cached histories and catalogue at once; every process drops the
  // account's served model snapshot.
  deps.recommendations.forgetAccount(accountId);
  deps.attributions.dropAccount(accountId);
  await deps.database
    .notify(MODEL_PUBLISHED_CHANNEL, JSON.stringify({ accountId, modelId: null }))
    .catch((error: unknown) =>
      deps.logger.warn("could not announce the sandbox reset", { error, accountId }),
    );
  return { deleted, resetAt: new Date().toISOString() };
}
