/**
 * MercadoPago through its preapproval (recurring subscription) API: creating a preapproval answers the
 * init_point the payer opens to authorise; webhooks name the preapproval and its state is read back from
 * GET /preapproval/{id}, so a forged body cannot change a plan.
 */
import { AppError } from "../../shared/errors";
import type { Logger } from "../../shared/logger";
import type {
  PaymentProvider,
  PortalRequest,
  ProviderSession,
  ProviderSubscription,
  ProviderSubscriptionStatus,
  SubscriptionRequest,
} from "./provider";

interface Preapproval {
  id?: string;
  init_point?: string;
  status?: string;
  external_reference?: string | null;
  payer_id?: number | string | null;
  next_payment_date?: string | null;
}

const STATUSES: readonly ProviderSubscriptionStatus[] = ["pending", "authorized", "paused", "cancelled"];
const TIMEOUT_MS = 10_000;

export class MercadoPagoProvider implements PaymentProvider {
  readonly name = "mercadopago" as const;

  constructor(
    private readonly apiUrl: string,
    private readonly accessToken: string,
    private readonly logger: Logger,
  ) {}

  async createSubscription(request: SubscriptionRequest): Promise<ProviderSession> {
    const created = await this.call("POST", "/preapproval", {
      reason: `${request.plan.name} plan`,
      external_reference: String(request.accountId),
      payer_email: request.payerEmail,
      back_url: request.backUrl,
      auto_recurring: {
        frequency: 1,
        frequency_type: "months",
        transaction_amount: request.plan.priceMonthly,
        currency_id: request.plan.currency,
      },
    });
    if (created === undefined || typeof created.id !== "string" || typeof created.init_point !== "string") {
      throw this.failure("MercadoPago did not return a preapproval id and init_point");
    }
    return { externalId: created.id, checkoutUrl: created.init_point };
  }

  createCheckout(request: SubscriptionRequest): Promise<ProviderSession> {
    return this.createSubscription(request);
  }

  /** MercadoPago has no portal API: the preapproval's own page is where the payer manages it. */
  async createPortal(request: PortalRequest): Promise<{ url: string; externalId: string }> {
    const preapproval = await this.call(
      "GET",
      `/preapproval/${encodeURIComponent(request.subscriptionExternalId)}`,
    );
    if (preapproval?.init_point === undefined)
      throw this.failure("MercadoPago did not return the subscription page");
    return { url: preapproval.init_point, externalId: request.subscriptionExternalId };
  }

  async fetchSubscription(externalId: string): Promise<ProviderSubscription | undefined> {
    const preapproval = await this.call("GET", `/preapproval/${encodeURIComponent(externalId)}`);
    if (preapproval === undefined) return undefined;
    const status = STATUSES.find((s) => s === preapproval.status) ?? "pending";
    const reference = Number(preapproval.external_reference);
    const next = preapproval.next_payment_date ? new Date(preapproval.next_payment_date) : null;
    return {
      externalId,
      status,
      accountId: Number.isInteger(reference) && reference > 0 ? reference : null,
      customerId:
        preapproval.payer_id === undefined || preapproval.payer_id === null
          ? null
          : String(preapproval.payer_id),
      renewsAt: next !== null && !Number.isNaN(next.getTime()) ? next : null,
    };
  }

  /** PUT /preapproval/{id} with status cancelled: MercadoPago stops charging it (a cancellation is final). */
  async cancelSubscription(externalId: string): Promise<void> {
    await this.call("PUT", `/preapproval/${encodeURIComponent(externalId)}`, { status: "cancelled" });
  }

  /** Answers the parsed body, or undefined on 404; other failures are 500s with the cause logged. */
  private async call(method: string, path: string, body?: unknown): Promise<Preapproval | undefined> {
    let response: Response;
    try {
      response = await fetch(`${this.apiUrl}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${this.accessToken}`,
          "content-type": "application/json",
          "x-idempotency-key": crypto.randomUUID(),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(TIMEOUT_MS),
      });
    } catch (error) {
      throw this.failure("MercadoPago could not be reached", error);
    }
    if (response.status === 404) return undefined;
    const text = await response.text();
    if (!response.ok)
      throw this.failure(`MercadoPago answered ${response.status} to ${method} ${path}`, text.slice(0, 500));
    try {
      return JSON.parse(text) as Preapproval;
    } catch (error) {
      throw this.failure("MercadoPago answered something other than JSON", error);
    }
  }

  private failure(message: string, cause?: unknown): AppError {
    this.logger.error("payment provider call failed", { provider: this.name, message, cause });
    return new AppError("INTERNAL_ERROR", "The payment provider could not be reached; try again later", {
      cause,
    });
  }
}
