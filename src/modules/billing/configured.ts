import type { AppDeps } from "../../deps";
import { AppError } from "../../shared/errors";
import type { PaymentProvider } from "./provider";

export type BillingDeps = Pick<AppDeps, "database" | "plans" | "payments" | "config" | "identity" | "logger">;

/** The billing deps with a provider, or 503 BILLING_NOT_CONFIGURED when PAYMENT_PROVIDER is unset. */
export function configuredBilling<D extends Pick<AppDeps, "payments">>(
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
