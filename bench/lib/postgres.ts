import postgres from "postgres";

/** Null when the server answers, else why not. */
export async function postgresUnavailableReason(adminUrl: string): Promise<string | null> {
  const sql = postgres(adminUrl, { max: 1, connect_timeout: 3, onnotice: () => {} });
  try {
    await sql`select 1`;
    return null;
  } catch (error) {
    return `Postgres at ${redact(adminUrl)} unreachable (${(error as Error).message})`;
  } finally {
    await sql.end({ timeout: 1 });
  }
}

export interface FreshDatabase {
  url: string;
  drop(): Promise<void>;
}

/** A throw-away database on the admin URL's server, dropped (with its connections) by `drop()`. */
export async function createFreshDatabase(adminUrl: string, label: string): Promise<FreshDatabase> {
  const name = `bench_${label}_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 6)}`.replace(
    /[^a-z0-9_]/g,
    "_",
  );
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  try {
    await admin.unsafe(`create database "${name}"`);
  } finally {
    await admin.end({ timeout: 1 });
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const sql = postgres(adminUrl, { max: 1, onnotice: () => {} });
      try {
        await sql.unsafe(`drop database if exists "${name}" with (force)`);
      } finally {
        await sql.end({ timeout: 1 });
      }
    },
  };
}

function redact(url: string): string {
  const u = new URL(url);
  if (u.password) u.password = "***";
  return u.toString();
}
