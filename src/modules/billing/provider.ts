/**
 * The payment-provider adapter: everything billing needs from a provider, so the built-in `local` provider
 * and MercadoPago are interchangeable. Chosen once at start-up from PAYMENT_PROVIDER.
 */
import type { PaymentProviderName } from "../../config";
import type { PlanType } from "../plans/schemas";

export interface SubscriptionRequest {
  readonly accountId: number;
  readonly plan: PlanType;
  readonly payerEmail: string;
  /** Where the payer returns after authorising. */
  readonly backUrl: string;
}

export interface ProviderSession {
  /** The provider's id of the subscription (MercadoPago preapproval id; the local checkout token). */
  readonly externalId: string;
  readonly checkoutUrl: string;
}

export type ProviderSubscriptionStatus = "pending" | "authorized" | "paused" | "cancelled";

export interface ProviderSubscription {
  readonly externalId: string;
  readonly status: ProviderSubscriptionStatus;
  /** The account id we sent as external reference, when the provider echoes it. */
  readonly accountId: number | null;
  readonly customerId: string | null;
  /** Next charge; null when the provider does not charge on a schedule (local). */
  readonly renewsAt: Date | null;
}

export interface PortalRequest {
  readonly accountId: number;
  readonly subscriptionExternalId: string;
  readonly returnUrl: string;
}

export interface PaymentProvider {
  readonly name: PaymentProviderName;
  /** A recurring monthly subscription the payer authorises on the checkout URL. */
  createSubscription(request: SubscriptionRequest): Promise<ProviderSession>;
  /** A checkout that subscribes to, or changes to, a plan. */
  createCheckout(request: SubscriptionRequest): Promise<ProviderSession>;
  /** A page where the subscriber manages (or cancels) the subscription. */
  createPortal(request: PortalRequest): Promise<{ url: string; externalId: string }>;
  /** The subscription as the provider sees it now; webhooks carry only its id. */
  fetchSubscription(externalId: string): Promise<ProviderSubscription | undefined>;
  /**
   * Stops a subscription's charges for good (the account moved to another one). A subscription the provider
   * no longer knows, or already cancelled, is not an error.
   */
  cancelSubscription(externalId: string): Promise<void>;
}
