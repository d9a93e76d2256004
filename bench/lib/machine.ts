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
  };
}

/** One line; `live` adds the memory free right now (only meaningful for the machine this process runs on). */
export function describeMachine(m: MachineInfo, live = false): string {
  const gib = (b: number) => `${(b / 2 ** 30).toFixed(1)} GiB`;
  return (
    `${m.cpuModel}, ${m.cores} cores, ${gib(m.memoryBytes)} RAM${live ? ` (${gib(freemem())} free)` : ""}, ` +
    `${m.platform}/${m.arch} ${m.kernel}, Bun ${m.bunVersion}, commit ${m.gitCommit}${m.gitDirty ? "+dirty" : ""}`
  );
}
