/**
 * The built-in provider: the checkout and portal pages are served by this service
 * (/api/v1/billing/local/...), and confirming there sends the signed webhook to our own handler. It charges
 * nothing; it lets the whole subscription flow run without a payment account.
 */
import { randomBytes } from "node:crypto";
import { and, eq, inArray } from "drizzle-orm";
import type { Database } from "../../db/client";
import { billingSessions } from "../../db/schema";
import type {
  PaymentProvider,
  PortalRequest,
  ProviderSession,
  ProviderSubscription,
  ProviderSubscriptionStatus,
  SubscriptionRequest,
} from "./provider";

const MONTH_MS = 30 * 86_400_000;

export const LOCAL_PATH = "/api/v1/billing/local";

export const localToken = (kind: "chk" | "por"): string =>
  `loc_${kind}_${randomBytes(24).toString("base64url")}`;

export class LocalPaymentProvider implements PaymentProvider {
  readonly name = "local" as const;

  constructor(
    private readonly database: Database,
    private readonly publicBaseUrl: string,
  ) {}

  async createSubscription(_request: SubscriptionRequest): Promise<ProviderSession> {
    const externalId = localToken("chk");
    return { externalId, checkoutUrl: `${this.publicBaseUrl}${LOCAL_PATH}/checkout/${externalId}` };
  }

  createCheckout(request: SubscriptionRequest): Promise<ProviderSession> {
    return this.createSubscription(request);
  }

  async createPortal(_request: PortalRequest): Promise<{ url: string; externalId: string }> {
    const externalId = localToken("por");
    return { url: `${this.publicBaseUrl}${LOCAL_PATH}/portal/${externalId}`, externalId };
  }

  async fetchSubscription(externalId: string): Promise<ProviderSubscription | undefined> {
    const [session] = await this.database.db
      .select({
        accountId: billingSessions.accountId,
        status: billingSessions.status,
        updatedAt: billingSessions.updatedAt,
      })
      .from(billingSessions)
      .where(and(eq(billingSessions.provider, "local"), eq(billingSessions.externalId, externalId)));
    if (session === undefined) return undefined;
    return {
      externalId,
      // A superseded subscription still runs here until it is cancelled, as it would at a real provider.
      status: (session.status === "superseded" ? "authorized" : session.status) as ProviderSubscriptionStatus,
      accountId: session.accountId,
      customerId: `local_${session.accountId}`,
      // A month after authorisation. Test mode charges nothing and never renews: the subscription then
      // lapses (lapse-sweeper.ts), as an unpaid one would.
      renewsAt: session.status === "authorized" ? new Date(session.updatedAt.getTime() + MONTH_MS) : null,
    };
  }

  /** This provider's record of a subscription is its billing session: cancelling is marking it so. */
  async cancelSubscription(externalId: string): Promise<void> {
    await this.database.db
      .update(billingSessions)
      .set({ status: "cancelled", updatedAt: new Date() })
      .where(
        and(
          eq(billingSessions.provider, "local"),
          eq(billingSessions.externalId, externalId),
          inArray(billingSessions.status, ["authorized", "superseded"]),
        ),
      );
  }
}
