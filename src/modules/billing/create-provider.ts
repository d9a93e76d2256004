import type { Config } from "../../config";
import type { Database } from "../../db/client";
import type { Logger } from "../../shared/logger";
import { LocalPaymentProvider } from "./local-provider";
import { MercadoPagoProvider } from "./mercadopago-provider";
import type { PaymentProvider } from "./provider";

export function createPaymentProvider(config: Config, database: Database, logger: Logger): PaymentProvider {
  if (config.paymentProvider === "mercadopago") {
    // loadConfig already refused PAYMENT_PROVIDER=mercadopago without a token.
    return new MercadoPagoProvider(config.mercadopagoApiUrl, config.mercadopagoAccessToken ?? "", logger);
  }
  return new LocalPaymentProvider(database, config.publicBaseUrl);
}
