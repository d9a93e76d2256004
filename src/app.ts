import { Elysia } from "elysia";
import type { AppDeps } from "./app-deps";
import { corsPlugin } from "./http/cors";
import { ELYSIA_CONFIG, httpKernel } from "./http/kernel";
import { type GeneratorApp, OPENAPI_PATH, openapiDocumentModule } from "./http/openapi-document";
import type { RouteShape } from "./http/openapi-errors";
import { MODULES } from "./modules";
import type { ServiceModule } from "./modules/module";

export { OPENAPI_PATH };

const BUN_BODY_LIMIT_BYTES = 2 ** 40;

export interface AppOptions {
  /**
   * Compile every route's handler and validators when the server starts listening. Otherwise a route is
   * compiled on its first request, on the thread that answers all of them: ~200 ms for the personalised
   * query, during which every other request waits. The service does this; tests, which build many apps and
   * call few routes of each, do not.
   */
  readonly precompile?: boolean;
  /** The modules whose routes to serve: the list createDeps was given (the default is the same for both). */
  readonly modules?: readonly ServiceModule[];
}

/** The whole HTTP API as one Elysia instance; tests call `app.handle(request)` on it in-process. */
export function createApp(deps: AppDeps, options: AppOptions = {}) {
  // The route table (405s, the OpenAPI document) exists only once `app` is built.
  let built: unknown;
  const routes = () =>
    ((built as { routes?: RouteShape[] } | undefined)?.routes ?? []) as readonly RouteShape[];
  // Bun's own body limit answers an empty 413 and drops the connection; the kernel reads every body with a
  // 10 MB cap instead and answers the contract's JSON 413, so Bun's limit is only a last resort.
  const app = new Elysia({
    ...ELYSIA_CONFIG,
    precompile: options.precompile ?? false,
    serve: { maxRequestBodySize: BUN_BODY_LIMIT_BYTES },
  })
    .use(
      httpKernel(deps.logger, deps.metrics, {
        routes,
        onDatabaseUnavailable: () => deps.health.markUnreachable(),
        onRequest: () => deps.database.takeAnswers(),
      }),
    )
    // After the kernel (the request id exists), before every route: preflights never reach authentication.
    .use(corsPlugin(deps.config.corsOrigins))
    .use(
      openapiDocumentModule(
        {
          title: "Recommendation Service API",
          version: deps.config.version,
          description:
            "Multi-tenant recommendation engine: record catalogue and end-user behaviour, train per-account " +
            "models, and ask for personalised, similar, category and e-commerce recommendations. Errors are " +
            "`{message, errorCode, requestId}`; every response carries `X-Request-Id`. A first-call guide: " +
            "docs/INTEGRATING.md in the repository.",
          serverUrl: deps.config.publicBaseUrl,
        },
        () => built as GeneratorApp,
      ),
    );
  // Each module's routes, in the module list's order.
  const modules = options.modules ?? MODULES;
  for (const module of modules) if (module.routes !== undefined) app.use(module.routes(deps));
  built = app;
  return app;
}

export type App = ReturnType<typeof createApp>;
