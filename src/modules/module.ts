/**
 * What a module declares to the app: its routes, and what it adds to the shared machinery. createDeps
 * (src/deps.ts) walks the module list (src/modules/index.ts) for job kinds, tenant guards and background work;
 * createApp (src/app.ts) walks it for routes. List order is route order and guard order.
 */
import type { AnyElysia } from "elysia";
import type { AppDeps } from "../app-deps";
import type { TenantGuard } from "../http/tenant";
import type { JobKind } from "../jobs/runner";

export interface ServiceModule {
  readonly name: string;
  /** The module's HTTP routes, one Elysia plugin. */
  routes?(deps: AppDeps): AnyElysia;
  /** Background job kinds, registered with the job runner before it starts. */
  jobKinds?(deps: AppDeps): readonly JobKind[];
  /** Checks run after authentication on every authenticated route (see src/http/auth.ts). */
  guards?(deps: AppDeps): readonly TenantGuard[];
  /** Starts the module's background work for one app, after the shared parts started; resolves to its stop. */
  start?(deps: AppDeps): Promise<() => Promise<void> | void>;
}
