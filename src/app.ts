import { openapi } from "@elysiajs/openapi";
import { Elysia } from "elysia";
import type { AppDeps } from "./deps";
import { ELYSIA_CONFIG, httpKernel, MAX_BODY_BYTES } from "./http/kernel";
import { errorReferences, type RouteShape } from "./http/openapi-errors";
import { accountsModule } from "./modules/accounts";
import { apiKeysModule } from "./modules/api-keys";
import { authModule } from "./modules/auth";
import { billingModule } from "./modules/billing";
import { dashboardModule } from "./modules/dashboard";
import { endUsersModule } from "./modules/end-users";
import { healthModule } from "./modules/health";
import { healthAuthModule } from "./modules/health/auth-route";
import { ingestionModule } from "./modules/ingestion";
import { interactionsModule } from "./modules/interactions";
import { opsModule } from "./modules/ops";
import { pipelineModule } from "./modules/pipeline";
import { plansModule } from "./modules/plans";
import { productsModule } from "./modules/products";
import { recommendationsModule } from "./modules/recommendations";
import { sandboxModule } from "./modules/sandbox";
import { systemUsersModule } from "./modules/system-users";
import { usageModule } from "./modules/usage";

export const OPENAPI_PATH = "/api/v1/public-openapi.json";

/** The whole HTTP API as one Elysia instance; tests call `app.handle(request)` on it in-process. */
export function createApp(deps: AppDeps) {
  // The error responses are derived from the finished route table, which exists only once `app` is built.
  let routes: () => readonly RouteShape[] = () => [];
  const app = new Elysia({ ...ELYSIA_CONFIG, serve: { maxRequestBodySize: MAX_BODY_BYTES + 1024 } })
    .use(httpKernel(deps.logger, deps.metrics))
    .use(
      openapi({
        path: "/api/v1/docs",
        specPath: OPENAPI_PATH,
        references: errorReferences(() => routes()),
        documentation: {
          info: {
            title: "Recommendation Service API",
            version: deps.config.version,
            description:
              "Multi-tenant recommendation engine: record catalogue and end-user behaviour, train per-account " +
              "models, and ask for personalised, similar, category and e-commerce recommendations. Errors are " +
              "`{message, errorCode, requestId}`; every response carries `X-Request-Id`.",
          },
          servers: [{ url: deps.config.publicBaseUrl }],
          components: {
            securitySchemes: {
              ApiKey: { type: "apiKey", in: "header", name: "X-API-Key" },
              BearerJWT: { type: "http", scheme: "bearer", bearerFormat: "JWT" },
            },
          },
        },
      }),
    )
    .use(healthModule(deps))
    .use(opsModule(deps))
    .use(productsModule(deps))
    .use(endUsersModule(deps))
    .use(interactionsModule(deps))
    .use(ingestionModule(deps))
    .use(pipelineModule(deps))
    .use(authModule(deps))
    .use(apiKeysModule(deps))
    .use(systemUsersModule(deps))
    .use(accountsModule(deps))
    .use(healthAuthModule(deps))
    .use(plansModule(deps))
    .use(usageModule(deps))
    .use(billingModule(deps))
    .use(sandboxModule(deps))
    .use(recommendationsModule(deps))
    .use(dashboardModule());
  routes = () => app.routes as unknown as RouteShape[];
  return app;
}

export type App = ReturnType<typeof createApp>;
