/**
 * What GET /ready reports. Unlike /health (is the process alive?), readiness answers "should a load
 * balancer send traffic here now?": the database answered the last background probe, the probe is not
 * stuck, the process is not shutting down, and every registered component (e.g. tenant snapshots) says
 * it is ready. Checks run in memory: no database round trip per request.
 */
import type { HealthMonitor } from "../health/monitor";

export type CheckState = "ok" | "failing" | "not_configured";

export interface ReadinessCheck {
  state: CheckState;
  detail: string;
}

/** A component's own readiness, e.g. `() => ({ state: "ok", detail: "12 snapshots loaded" })`. */
export type ReadinessProbe = () => ReadinessCheck;

/** Checks that are always listed, "not_configured" until a module registers them. */
const EXPECTED = ["snapshots"] as const;

/** A probe older than this is treated as stuck (the monitor probes every few seconds). */
const STALE_PROBE_MS = 30_000;

export class Readiness {
  private readonly probes = new Map<string, ReadinessProbe>();
  private stopping = false;

  constructor(private readonly health: HealthMonitor) {}

  /** Registers a component's check under `name`; "snapshots" is expected from the snapshot registry. */
  register(name: string, probe: ReadinessProbe): void {
    this.probes.set(name, probe);
  }

  /** From SIGTERM on, report not ready so load balancers stop routing here before the listener closes. */
  markStopping(): void {
    this.stopping = true;
  }

  evaluate(now = Date.now()): { ready: boolean; checks: Record<string, ReadinessCheck> } {
    const checks: Record<string, ReadinessCheck> = {
      database: this.databaseCheck(now),
      shutdown: this.stopping
        ? { state: "failing", detail: "shutting down" }
        : { state: "ok", detail: "accepting requests" },
    };
    for (const name of EXPECTED) {
      checks[name] = { state: "not_configured", detail: `no ${name} component in this build` };
    }
    for (const [name, probe] of this.probes) {
      try {
        checks[name] = probe();
      } catch (error) {
        checks[name] = { state: "failing", detail: `check threw: ${(error as Error).message}` };
      }
    }
    const ready = Object.values(checks).every((check) => check.state !== "failing");
    return { ready, checks };
  }

  private databaseCheck(now: number): ReadinessCheck {
    const probe = this.health.current();
    if (probe.state === "unknown" || probe.checkedAt === null) {
      return { state: "failing", detail: `${probe.kind}: not probed yet` };
    }
    if (probe.state === "down") return { state: "failing", detail: `${probe.kind}: unreachable` };
    const age = now - Date.parse(probe.checkedAt);
    if (age > STALE_PROBE_MS) {
      return {
        state: "failing",
        detail: `${probe.kind}: last probe answered ${Math.round(age / 1000)} s ago`,
      };
    }
    return { state: "ok", detail: `${probe.kind}: answered in ${probe.latencyMs} ms` };
  }
}
