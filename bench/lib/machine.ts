import { cpus, freemem, release, totalmem } from "node:os";
import type { MachineInfo } from "./types";

function git(repoRoot: string, args: string[]): string {
  const res = Bun.spawnSync(["git", ...args], { cwd: repoRoot, stderr: "ignore" });
  return res.exitCode === 0 ? res.stdout.toString().trim() : "";
}

export function machineInfo(repoRoot: string): MachineInfo {
  const cpu = cpus();
  return {
    cpuModel: cpu[0]?.model.trim() ?? "unknown",
    cores: cpu.length,
    memoryBytes: totalmem(),
    platform: process.platform,
    arch: process.arch,
    kernel: release(),
    bunVersion: Bun.version,
    gitCommit: git(repoRoot, ["rev-parse", "--short=10", "HEAD"]) || "unknown",
    gitDirty: git(repoRoot, ["status", "--porcelain", "--untracked-files=no"]) !== "",
    date: new Date().toISOString(),
    pageFaultMicros: pageFaultMicros(),
  };
}

/**
 * µs per minor page fault on this machine: 16 MiB of fresh pages touched once each, timed and divided by the
 * faults the kernel counted, the median of five rounds (a round whose memory the allocator had already
 * mapped is left out); null when no round faulted. Bare metal maps a page in well under a microsecond; some
 * virtual machines take over ten. The service faults when its caches grow and when memory its allocators gave
 * back is used again, and the serving rows show it: on a machine measured at 11.5 µs a fault, a user's first
 * request faulted about 7 times and a request of the shop mix about once (`bench/profile-serving.ts`).
 */
export function pageFaultMicros(): number | null {
  const pages = 4096;
  const costs: number[] = [];
  for (let round = 0; round < 5; round++) {
    const bytes = new Uint8Array(pages * 4096);
    const faultsBefore = process.resourceUsage().minorPageFault;
    const started = performance.now();
    for (let page = 0; page < pages; page++) bytes[page * 4096] = 1;
    const ms = performance.now() - started;
    const faults = process.resourceUsage().minorPageFault - faultsBefore;
    if (faults >= pages / 2) costs.push((ms * 1000) / faults);
  }
  if (costs.length === 0) return null;
  costs.sort((a, b) => a - b);
  return costs[Math.floor(costs.length / 2)]!;
}

/** One line; `live` adds the memory free right now (only meaningful for the machine this process runs on). */
export function describeMachine(m: MachineInfo, live = false): string {
  const gib = (b: number) => `${(b / 2 ** 30).toFixed(1)} GiB`;
  return (
    `${m.cpuModel}, ${m.cores} cores, ${gib(m.memoryBytes)} RAM${live ? ` (${gib(freemem())} free)` : ""}, ` +
    `${m.platform}/${m.arch} ${m.kernel}, Bun ${m.bunVersion}, commit ${m.gitCommit}${m.gitDirty ? "+dirty" : ""}` +
    (typeof m.pageFaultMicros === "number" ? `, page fault ${m.pageFaultMicros.toFixed(1)} µs` : "")
  );
}
