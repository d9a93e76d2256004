/**
 * Every module of the service, in route order (and tenant-guard order: authentication's e-mail grace check
 * before the plan limits). createDeps and createApp walk this list; a new module is added here.
 */
import { accountsModule } from "./accounts";
import { analyticsModule } from "./analytics";
import { apiKeysModule } from "./api-keys";
import { authModule } from "./auth";
import { billingModule } from "./billing";
import { dashboardModule } from "./dashboard";
import { endUsersModule } from "./end-users";
import { experimentsModule } from "./experiments";
import { healthModule } from "./health";
import { healthAuthModule } from "./health/auth-route";
import { ingestionModule } from "./ingestion";
import { interactionsModule } from "./interactions";
import type { ServiceModule } from "./module";
import { opsModule } from "./ops";
import { plansModule } from "./plans";
import { productsModule } from "./products";
import { recommendationsModule } from "./recommendations";
import { sandboxModule } from "./sandbox";
import { systemUsersModule } from "./system-users";
import { trainingModule } from "./training";
import { usageModule } from "./usage";
import { widgetModule } from "./widget";

export const MODULES: readonly ServiceModule[] = [
  healthModule,
  opsModule,
  productsModule,
  endUsersModule,
  interactionsModule,
  ingestionModule,
  trainingModule,
  authModule,
  apiKeysModule,
  systemUsersModule,
  accountsModule,
  healthAuthModule,
  plansModule,
  usageModule,
  billingModule,
  sandboxModule,
  recommendationsModule,
  widgetModule,
  analyticsModule,
  experimentsModule,
  dashboardModule,
];
