import { afterAll, describe, expect, test } from "bun:test";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ConfigError, loadConfig } from "../../src/config";
import { childEnv, MAIN, PROJECT_ROOT } from "../deploy/support/server-process";
import { makeTempDir } from "../helpers/temp-dirs";

const dir = makeTempDir("rs-config-");
const aFile = join(dir, "a-file.pem");
writeFileSync(aFile, "not really a certificate");
const secret = "config-test-secret-config-test-secret-0123456789";
const base = { DATA_DIR: join(dir, "data"), JWT_SECRET: secret };

afterAll(() => rmSync(dir, { recursive: true, force: true }));

const settingOf = (env: Record<string, string>): string | undefined => {
  try {
    loadConfig({ ...base, ...env });
    return undefined;
  } catch (error) {
    if (error instanceof ConfigError) return error.setting;
    throw error;
  }
};

describe("settings", () => {
  test("the defaults give a working configuration", () => {
    const config = loadConfig(base);
    expect(config.port).toBe(8000);
    expect(config.host).toBe("0.0.0.0");
    expect(config.databaseUrl).toBeUndefined();
    expect(config.tls).toBeUndefined();
    expect(config.publicBaseUrl).toBe("http://localhost:8000");
    // Unset: billing is not configured (the local provider is an explicit test mode, never a default).
    expect(config.paymentProvider).toBeUndefined();
    expect(config.signupLimitPerHour).toBe(20);
    expect(config.trustProxy).toBeUndefined();
    expect(config.logLevel).toBe("info");
    expect(config.embeddedStoreTimings).toBeUndefined();
    expect(loadConfig({ ...base, EMBEDDED_STORE_TIMINGS: join(dir, "t.jsonl") }).embeddedStoreTimings).toBe(
      join(dir, "t.jsonl"),
    );
    expect(config.nativeKernels).toEqual({ enabled: true, compiler: "cc" });
    expect(config.erasureRetraining).toEqual({ sweepSeconds: 600, debounceSeconds: 900 });
    expect(Object.isFrozen(config)).toBe(true);
  });

  test("the erasure retraining sweep and debounce are set in seconds; a debounce of 0 retrains at the next sweep", () => {
    const config = loadConfig({
      ...base,
      ERASURE_RETRAIN_SWEEP_SECONDS: "60",
      ERASURE_RETRAIN_DEBOUNCE_SECONDS: "0",
    });
    expect(config.erasureRetraining).toEqual({ sweepSeconds: 60, debounceSeconds: 0 });
  });

  test("RECSYS_NATIVE=0 turns the C kernels off and CC names their compiler", () => {
    expect(loadConfig({ ...base, RECSYS_NATIVE: "0", CC: "clang" }).nativeKernels).toEqual({
      enabled: false,
      compiler: "clang",
    });
    expect(loadConfig({ ...base, RECSYS_NATIVE: "1" }).nativeKernels.enabled).toBe(true);
  });

  const bad: [string, Record<string, string>][] = [
    ["PORT", { PORT: "eighty" }],
    ["PORT", { PORT: "70000" }],
    ["DATABASE_URL", { DATABASE_URL: "mysql://localhost/db" }],
    ["DATABASE_URL", { DATABASE_URL: "not a url" }],
    ["REDIS_URL", { REDIS_URL: "http://localhost:6379" }],
    ["TLS_KEY_FILE", { TLS_CERT_FILE: aFile }],
    ["TLS_CERT_FILE", { TLS_KEY_FILE: aFile }],
    ["TLS_CERT_FILE", { TLS_CERT_FILE: join(dir, "missing.pem"), TLS_KEY_FILE: aFile }],
    ["TLS_KEY_FILE", { TLS_CERT_FILE: aFile, TLS_KEY_FILE: join(dir, "missing.key") }],
    ["EMBEDDED_STORE_TIMINGS", { EMBEDDED_STORE_TIMINGS: join(dir, "missing", "timings.jsonl") }],
    ["JWT_SECRET", { JWT_SECRET: "too-short" }],
    ["PUBLIC_BASE_URL", { PUBLIC_BASE_URL: "ftp://example.com" }],
    ["PUBLIC_BASE_URL", { PUBLIC_BASE_URL: "example.com" }],
    ["ADMIN_EMAILS", { ADMIN_EMAILS: "ops@example.com,not-an-email" }],
    ["SMTP_URL", { SMTP_URL: "http://mail.example.com" }],
    ["PLANS_FILE", { PLANS_FILE: join(dir, "no-such-plans.json") }],
    ["PAYMENT_PROVIDER", { PAYMENT_PROVIDER: "paypal" }],
    ["MERCADOPAGO_ACCESS_TOKEN", { PAYMENT_PROVIDER: "mercadopago" }],
    ["LOG_LEVEL", { LOG_LEVEL: "loud" }],
    ["PAYMENT_WEBHOOK_SECRET", { PAYMENT_WEBHOOK_SECRET: "x".repeat(31) }],
    ["SIGNUP_LIMIT_PER_HOUR", { SIGNUP_LIMIT_PER_HOUR: "-1" }],
    ["TRUST_PROXY", { TRUST_PROXY: "my-proxy" }],
    ["JWT_TTL_SECONDS", { JWT_TTL_SECONDS: "10" }],
    ["JOB_CONCURRENCY", { JOB_CONCURRENCY: "-1" }],
    ["TRAININGS_PER_DAY", { TRAININGS_PER_DAY: "0" }],
    ["DATA_DIR", { DATA_DIR: join(aFile, "inside-a-file") }],
    ["RECSYS_NATIVE", { RECSYS_NATIVE: "yes" }],
    ["ERASURE_RETRAIN_SWEEP_SECONDS", { ERASURE_RETRAIN_SWEEP_SECONDS: "5" }],
    ["ERASURE_RETRAIN_SWEEP_SECONDS", { ERASURE_RETRAIN_SWEEP_SECONDS: "ten minutes" }],
    ["ERASURE_RETRAIN_DEBOUNCE_SECONDS", { ERASURE_RETRAIN_DEBOUNCE_SECONDS: "86400" }],
    ["ERASURE_RETRAIN_DEBOUNCE_SECONDS", { ERASURE_RETRAIN_DEBOUNCE_SECONDS: "-1" }],
  ];
  for (const [setting, env] of bad) {
    test(`a bad ${setting} (${JSON.stringify(env).replaceAll(dir, "…")}) stops start-up naming ${setting}`, () => {
      expect(settingOf(env)).toBe(setting);
    });
  }

  test("the error message names the setting and says what is wrong", () => {
    expect(() => loadConfig({ ...base, LOG_LEVEL: "loud" })).toThrow(/LOG_LEVEL.*debug, info/);
  });

  test("a generated JWT secret is kept under DATA_DIR and reused on the next start", () => {
    const dataDir = join(dir, "generated");
    const first = loadConfig({ DATA_DIR: dataDir });
    const second = loadConfig({ DATA_DIR: dataDir });
    expect(first.jwtSecret.length).toBeGreaterThanOrEqual(32);
    expect(Buffer.from(second.jwtSecret).equals(Buffer.from(first.jwtSecret))).toBe(true);
  });
});

describe("bun run src/main.ts with a bad setting", () => {
  for (const [setting, env] of [
    ["PORT", { PORT: "eighty" }],
    ["JWT_SECRET", { JWT_SECRET: "short" }],
    ["DATABASE_URL", { DATABASE_URL: "mysql://localhost/db" }],
  ] as const) {
    test(`exits non-zero with a message naming ${setting}, before opening anything`, async () => {
      const proc = Bun.spawn([process.execPath, MAIN], {
        cwd: PROJECT_ROOT,
        env: childEnv({ ...base, ...env }),
        stdout: "pipe",
        stderr: "pipe",
      });
      const [code, stderr] = await Promise.all([proc.exited, new Response(proc.stderr).text()]);
      expect(code).not.toBe(0);
      expect(stderr).toContain(setting);
      expect(stderr).not.toContain("    at ");
    }, 60_000);
  }
});
