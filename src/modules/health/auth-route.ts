import { Elysia, t } from "elysia";
import type { AppDeps } from "../../app-deps";
import { authPlugin } from "../../http/auth";
import { ELYSIA_CONFIG } from "../../http/kernel";
import type { ServiceModule } from "../module";

const HealthAuthResponse = t.Object({
  status: t.Literal("ok"),
  account_id: t.Integer(),
  plan: t.String(),
});

const detail = {
  tags: ["Health"],
  summary: "Check an API key",
  description: "Answers 200 with the key's account and plan when the secret API key in X-API-Key is valid.",
};

/** GET /health/auth, also at /api/v1/health/auth: "does my API key work?". */
function healthAuthRoutes(deps: AppDeps) {
  const answer = ({ tenant }: { tenant: { accountId: number; account: { plan: string } } }) => ({
    status: "ok" as const,
    account_id: tenant.accountId,
    plan: tenant.account.plan,
  });
  return new Elysia({ ...ELYSIA_CONFIG, name: "health-auth" })
    .use(authPlugin(deps))
    .get("/health/auth", answer, { auth: { mode: "key" }, response: { 200: HealthAuthResponse }, detail })
    .get("/api/v1/health/auth", answer, {
      auth: { mode: "key" },
      response: { 200: HealthAuthResponse },
      detail,
    });
}

/** The authenticated health route, mounted after the account routes. */
export const healthAuthModule: ServiceModule = {
  name: "health-auth",
  routes: healthAuthRoutes,
};
