import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { TestContext } from "../helpers/context";

/** The verification token in the newest outbox message sent to `email`. */
export function latestVerificationToken(ctx: TestContext, email: string): string {
  const dir = join(ctx.deps.config.dataDir, "outbox");
  const files = readdirSync(dir)
    .filter((file) => file.endsWith(".eml"))
    .sort();
  for (const file of files.reverse()) {
    const text = readFileSync(join(dir, file), "utf8");
    if (!text.includes(`To: ${email}`)) continue;
    const match = /verify-email\?token=([A-Za-z0-9_.-]+)/.exec(text);
    if (match?.[1] !== undefined) return match[1];
  }
  throw new Error(`no verification mail for ${email}`);
}
