import type { Config } from "../../config";
import type { Database } from "../../db/client";
import { AppError } from "../../shared/errors";
import type { Logger } from "../../shared/logger";
import type { Identity } from "../auth/identity";
import type { PlanTableType } from "../plans/schemas";
import type { PaymentProvider } from "./provider";

export type BillingDeps = {
  readonly database: Database;
  readonly plans: Readonly<PlanTableType>;
  readonly payments: PaymentProvider | undefined;
  readonly config: Config;
  readonly identity: Identity;
  readonly logger: Logger;
};

/** The billing deps with a provider, or 503 BILLING_NOT_CONFIGURED when PAYMENT_PROVIDER is unset. */
export function configuredBilling<D extends { readonly payments: PaymentProvider | undefined }>(
  deps: D,
): D & { payments: PaymentProvider } {
  if (deps.payments === undefined) {
    throw new AppError(
      "BILLING_NOT_CONFIGURED",
      "Billing is not configured on this service (PAYMENT_PROVIDER is not set)",
    );
  }
  return deps as D & { payments: PaymentProvider };
}

export type ConfiguredBillingDeps = BillingDeps & { payments: PaymentProvider };
