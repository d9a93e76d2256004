/**
 * The real service (src/serve.ts, configured from the environment like src/main.ts), with one difference:
 * each bulk-ingestion chunk holds its transaction open for the milliseconds given as the first argument, so
 * test/jobs/crash.test.ts can kill the process mid-job. The pause is an option of the ingestion module that
 * only this harness sets; the production config has no such setting.
 */
import { MODULES } from "../../src/modules";
import { createIngestionModule } from "../../src/modules/ingestion";
import { serve } from "../../src/serve";

const chunkDelayMs = Number(process.argv[2]);
if (!Number.isInteger(chunkDelayMs) || chunkDelayMs < 0) {
  process.stderr.write("usage: bun run test/jobs/slow-ingestion-service.ts <chunk delay in ms>\n");
  process.exit(2);
}

const modules = MODULES.map((module) =>
  module.name === "ingestion" ? createIngestionModule({ chunkDelayMs }) : module,
);
serve({ modules }).catch((error: unknown) => {
  process.stderr.write(`start-up failed: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
