import type { Config } from "../../config";
import type { Database } from "../../db/client";
import type { Logger } from "../../shared/logger";
import { LocalPaymentProvider } from "./local-provider";
import { MercadoPagoProvider } from "./mercadopago-provider";
import type { PaymentProvider } from "./provider";

/** Undefined without PAYMENT_PROVIDER: billing is not configured, and paid plans cannot be bought. */
export function createPaymentProvider(
  config: Config,
  database: Database,
  logger: Logger,
): PaymentProvider | undefined {
  if (config.paymentProvider === "mercadopago") {
    // loadConfig already refused PAYMENT_PROVIDER=mercadopago without a token.
    return new MercadoPagoProvider(config.mercadopagoApiUrl, config.mercadopagoAccessToken ?? "", logger);
  }
  if (config.paymentProvider === "local") {
    logger.warn("PAYMENT_PROVIDER=local: billing runs in test mode, paid plans are granted without payment");
    return new LocalPaymentProvider(database, config.publicBaseUrl);
  }
  return undefined;
}
