import { and, eq, inArray, sql } from "drizzle-orm";
import type { Database } from "../../db/client";
import { models } from "../../db/schema";
import type { ValidationIssue } from "../../shared/errors";
import type { ArtifactCache } from "../../snapshots/artifact-cache";
import type { ExperimentCreate } from "./schemas";

/** What checking a pinned version reads. */
export interface PinnedModelDeps {
  readonly database: Database;
  readonly artifacts: ArtifactCache;
}

/**
 * Checks the model versions an experiment's arms pin: each must be a stored model of the account whose
 * artifact can still be loaded (on Postgres the artifact's chunks, on the embedded store its file, which is
 * removed once a newer model is published unless an experiment pins it). Answers one issue per arm that
 * fails, for the 422's `detail`.
 */
export async function checkPinnedVersions(
  deps: PinnedModelDeps,
  accountId: number,
  variants: ExperimentCreate["variants"],
): Promise<ValidationIssue[]> {
  const pinned = variants.flatMap((arm, index) =>
    arm.overrides?.model_version === undefined ? [] : [{ index, version: arm.overrides.model_version }],
  );
  if (pinned.length === 0) return [];
  const rows = await deps.database.db
    .select({ id: models.id, version: models.version, artifactBytes: models.artifactBytes })
    .from(models)
    .where(
      and(
        eq(models.accountId, accountId),
        inArray(
          models.version,
          pinned.map((p) => p.version),
        ),
      ),
    );
  const byVersion = new Map(rows.map((row) => [row.version, row]));
  const issues: ValidationIssue[] = [];
  for (const { index, version } of pinned) {
    const loc = ["body", "variants", index, "overrides", "model_version"];
    const row = byVersion.get(version);
    if (row === undefined) {
      issues.push({
        loc,
        msg: `This account has no model version ${version}; GET /api/v1/pipeline/models lists its versions`,
        type: "value_error.model_version.unknown",
      });
    } else if (!(await artifactStored(deps, accountId, row))) {
      issues.push({
        loc,
        msg:
          `Model version ${version} can no longer be served: its stored artifact was removed when a newer ` +
          "model was published. Pin the published version or a newer one",
        type: "value_error.model_version.artifact_unavailable",
      });
    }
  }
  return issues;
}

async function artifactStored(
  deps: PinnedModelDeps,
  accountId: number,
  row: { id: number; artifactBytes: number },
): Promise<boolean> {
  if ((await deps.artifacts.file(accountId, row.id, row.artifactBytes)) !== undefined) return true;
  const [chunk] = await deps.database.rows<{ found: number }>(sql`
    select 1 as found from model_artifact_chunks
    where model_id = ${row.id} and account_id = ${accountId} and seq = 0`);
  return chunk !== undefined;
}
