/**
 * A stable name for this service instance, kept under DATA_DIR. Job claims start with it, so after a crash
 * or SIGKILL the restarted process recognises its own dead claims and resumes them at once instead of
 * waiting for their heartbeat to go stale.
 */
import { randomBytes } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

interface InstanceFile {
  id: string;
  pid: number;
}

export function instanceIdentity(dataDir: string): string {
  const path = join(dataDir, "instance.json");
  const previous = readInstanceFile(path);
  // A second live process on the same DATA_DIR must not treat the first one's claims as its own dead ones.
  if (previous !== undefined && previous.pid !== process.pid && isAlive(previous.pid)) return freshId();
  const id = previous?.id ?? freshId();
  try {
    writeFileSync(path, JSON.stringify({ id, pid: process.pid } satisfies InstanceFile));
  } catch {
    return freshId();
  }
  return id;
}

function freshId(): string {
  return `i${randomBytes(6).toString("hex")}`;
}

function readInstanceFile(path: string): InstanceFile | undefined {
  try {
    const parsed = JSON.parse(readFileSync(path, "utf8")) as Partial<InstanceFile>;
    if (
      typeof parsed.id === "string" &&
      /^[a-z0-9]{1,32}$/.test(parsed.id) &&
      typeof parsed.pid === "number"
    ) {
      return { id: parsed.id, pid: parsed.pid };
    }
  } catch {
    // no file yet, or unreadable: start a new identity
  }
  return undefined;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
