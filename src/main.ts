/** Entry point: `--self-check`, or the service itself (src/serve.ts). */
import { loadNativeKernelSettings } from "./config";
import { serve } from "./serve";
import { createLogger } from "./shared/logger";

async function main(): Promise<void> {
  if (process.argv.includes("--self-check")) {
    // Loaded only here so a normal start does not open a second, throw-away database.
    const { runSelfCheck } = await import("./modules/ops/self-check");
    const report = await runSelfCheck(loadNativeKernelSettings());
    process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
    process.exit(report.ok ? 0 : 1);
  }
  await serve();
}

main().catch((error: unknown) => {
  createLogger("error").error("start-up failed", { error });
  process.exit(1);
});
