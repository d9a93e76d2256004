/**
 * The running experiments of every account, held in memory so that assigning a request to an arm costs a map
 * lookup and a hash, never a query. Reloaded (one small query over the running ones) every few seconds and at
 * once after a create or stop in this process; another process sees a start or stop within REFRESH_MS.
 */
import { eq, sql } from "drizzle-orm";
import type { Database } from "../../db/client";
import { numberArray } from "../../db/pg-array";
import { experiments } from "../../db/schema";
import type { Logger } from "../../shared/logger";
import { assignArm } from "./assignment";
import type { Arm, ArmOverrides } from "./schemas";

const REFRESH_MS = 5000;

export interface Assignment {
  experimentId: number;
  arm: string;
  overrides: ArmOverrides;
  /** The stored model (models.id) the arm pins with `model_version`; undefined: the published model. */
  modelId?: number;
}

interface RunningArm extends Arm {
  modelId?: number;
}

export class RunningExperiments {
  private byAccount = new Map<number, Map<string, { id: number; arms: RunningArm[] }>>();
  private pinned = new Map<number, number[]>();
  private timer: ReturnType<typeof setInterval> | undefined;

  constructor(
    private readonly database: Database,
    private readonly logger: Logger,
  ) {}

  /**
   * The arm serving this end user on this endpoint, if an experiment runs there. Without an end user (a
   * listing called without `external_user_id`) there is nothing to assign: the endpoint's usual answer.
   */
  assign(accountId: number, endpoint: string, externalUserId: string | undefined): Assignment | undefined {
    const running = this.byAccount.get(accountId)?.get(endpoint);
    if (running === undefined || externalUserId === undefined) return undefined;
    const arm = assignArm(running.id, externalUserId, running.arms);
    const assignment: Assignment = {
      experimentId: running.id,
      arm: arm.name,
      overrides: arm.overrides ?? {},
    };
    if (arm.modelId !== undefined) assignment.modelId = arm.modelId;
    return assignment;
  }

  /** The stored models (models.id) the account's running experiments pin: their artifacts must be kept. */
  pinnedModels(accountId: number): readonly number[] {
    return this.pinned.get(accountId) ?? [];
  }

  async refresh(): Promise<void> {
    const rows = await this.database.db
      .select({
        id: experiments.id,
        accountId: experiments.accountId,
        endpoint: experiments.endpoint,
        variants: experiments.variants,
      })
      .from(experiments)
      .where(eq(experiments.status, "running"));
    // Pinned versions are per account: the model ids serving them, in one small query.
    const versions = rows.flatMap((row) =>
      (row.variants as Arm[]).flatMap((arm) =>
        arm.overrides?.model_version === undefined
          ? []
          : [{ accountId: row.accountId, version: arm.overrides.model_version }],
      ),
    );
    const modelIds = new Map<string, number>();
    if (versions.length > 0) {
      const found = await this.database.rows<{ account_id: number; version: number; id: number }>(sql`
        select m.account_id, m.version, m.id
        from unnest(${numberArray(versions.map((v) => v.accountId))}::int[],
                    ${numberArray(versions.map((v) => v.version))}::int[]) as p(a, v)
        join models m on m.account_id = p.a and m.version = p.v`);
      for (const row of found) modelIds.set(`${row.account_id}:${row.version}`, Number(row.id));
    }
    const next = new Map<number, Map<string, { id: number; arms: RunningArm[] }>>();
    const pinned = new Map<number, number[]>();
    for (const row of rows) {
      let endpoints = next.get(row.accountId);
      if (endpoints === undefined) {
        endpoints = new Map();
        next.set(row.accountId, endpoints);
      }
      const arms = (row.variants as Arm[]).map((arm): RunningArm => {
        const version = arm.overrides?.model_version;
        const modelId = version === undefined ? undefined : modelIds.get(`${row.accountId}:${version}`);
        if (modelId === undefined) return arm;
        pinned.set(row.accountId, [...(pinned.get(row.accountId) ?? []), modelId]);
        return { ...arm, modelId };
      });
      endpoints.set(row.endpoint, { id: row.id, arms });
    }
    this.byAccount = next;
    this.pinned = pinned;
  }

  async start(): Promise<void> {
    await this.refresh();
    this.timer = setInterval(() => {
      this.refresh().catch((error: unknown) =>
        this.logger.warn("running experiments refresh failed", { error }),
      );
    }, REFRESH_MS);
    (this.timer as { unref?: () => void }).unref?.();
  }

  stop(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
  }
}
