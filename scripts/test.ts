/**
 * The project's test command: the whole suite on embedded PGlite, then the same suite on a real Postgres
 * (a fresh database created for the run and dropped after). Postgres comes from TEST_POSTGRES_URL, default
 * postgres://postgres@127.0.0.1:5432/postgres. Outside CI an unreachable Postgres is reported and skipped;
 * in CI (CI=true) it is a failure. Ends with one line: "N passed, M failed".
 */
import postgres from "postgres";

const args = process.argv.slice(2);
const adminUrl = process.env.TEST_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const inCi = process.env.CI === "true" || process.env.CI === "1";

interface RunResult {
  passed: number;
  failed: number;
  exitCode: number;
}

async function runSuite(label: string, env: Record<string, string | undefined>): Promise<RunResult> {
  console.log(`\n=== bun test on ${label} ===`);
  // Database-backed tests register tenants (argon2id hashing) and train small models: on a loaded 2-core
  // machine that can take longer than bun's 5 s default per test.
  const child = Bun.spawn([process.execPath, "test", "--timeout=60000", ...args], {
    env: { ...process.env, ...env },
    stdout: "pipe",
    stderr: "pipe",
  });
  let output = "";
  const pump = async (stream: ReadableStream<Uint8Array>, sink: NodeJS.WriteStream) => {
    const decoder = new TextDecoder();
    for await (const chunk of stream) {
      const text = decoder.decode(chunk, { stream: true });
      output += text;
      sink.write(text);
    }
  };
  await Promise.all([pump(child.stdout, process.stdout), pump(child.stderr, process.stderr)]);
  const exitCode = await child.exited;
  const passed = Number(/^\s*(\d+) pass\s*$/m.exec(output)?.[1] ?? 0);
  let failed = Number(/^\s*(\d+) fail\s*$/m.exec(output)?.[1] ?? 0);
  // A crash before the summary, or a non-zero exit without failures counted, still fails the run.
  if (exitCode !== 0 && failed === 0) failed = 1;
  return { passed, failed, exitCode };
}

async function withFreshDatabase<T>(run: (url: string) => Promise<T>): Promise<T | "unreachable"> {
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {}, connect_timeout: 5 });
  const name = `rs_test_${process.pid}_${Date.now().toString(36)}`;
  try {
    await admin`select 1`;
  } catch (error) {
    console.error(
      `Postgres at ${adminUrl.replace(/:[^:@/]*@/, ":***@")} is unreachable: ${(error as Error).message}`,
    );
    await admin.end({ timeout: 1 }).catch(() => {});
    return "unreachable";
  }
  await admin.unsafe(`create database ${name}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  try {
    return await run(url.toString());
  } finally {
    await admin.unsafe(`drop database if exists ${name} with (force)`).catch((error: Error) => {
      console.error(`could not drop ${name}: ${error.message}`);
    });
    await admin.end({ timeout: 5 });
  }
}

const results: RunResult[] = [];
results.push(await runSuite("PGlite (embedded)", { TEST_DATABASE_URL: undefined }));

const onPostgres = await withFreshDatabase((url) => runSuite("Postgres", { TEST_DATABASE_URL: url }));
if (onPostgres === "unreachable") {
  if (inCi) {
    console.error("CI requires the Postgres run: start Postgres or set TEST_POSTGRES_URL.");
    results.push({ passed: 0, failed: 1, exitCode: 1 });
  } else {
    console.warn("WARNING: the Postgres half of the suite was SKIPPED (no Postgres reachable).");
  }
} else {
  results.push(onPostgres);
}

const passed = results.reduce((sum, r) => sum + r.passed, 0);
const failed = results.reduce((sum, r) => sum + r.failed, 0);
console.log(`\n${passed} passed, ${failed} failed`);
process.exit(failed > 0 ? 1 : 0);
