/**
 * The running experiments of every account, held in memory so that assigning a request to an arm costs a map
 * lookup and a hash, never a query. Reloaded (one small query over the running ones) every few seconds and at
 * once after a create or stop in this process; another process sees a start or stop within REFRESH_MS.
 */
import { eq } from "drizzle-orm";
import type { Database } from "../../db/client";
import { experiments } from "../../db/schema";
import type { Logger } from "../../shared/logger";
import { assignArm } from "./assignment";
import type { Arm, ArmOverrides } from "./schemas";

const REFRESH_MS = 5000;

export interface Assignment {
  experimentId: number;
  arm: string;
  overrides: ArmOverrides;
}

export class RunningExperiments {
  private byAccount = new Map<number, Map<string, { id: number; arms: Arm[] }>>();
  private timer: ReturnType<typeof setInterval> | undefined;

  constructor(
    private readonly database: Database,
    private readonly logger: Logger,
  ) {}

  /** The arm serving this end user on this endpoint, if an experiment runs there. */
  assign(accountId: number, endpoint: string, externalUserId: string): Assignment | undefined {
    const running = this.byAccount.get(accountId)?.get(endpoint);
    if (running === undefined) return undefined;
    const arm = assignArm(running.id, externalUserId, running.arms);
    return { experimentId: running.id, arm: arm.name, overrides: arm.overrides ?? {} };
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
    const next = new Map<number, Map<string, { id: number; arms: Arm[] }>>();
    for (const row of rows) {
      let endpoints = next.get(row.accountId);
      if (endpoints === undefined) {
        endpoints = new Map();
        next.set(row.accountId, endpoints);
      }
      endpoints.set(row.endpoint, { id: row.id, arms: row.variants as Arm[] });
    }
    this.byAccount = next;
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
