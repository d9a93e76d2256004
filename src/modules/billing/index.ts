import { Elysia, t } from "elysia";
import type { AppDeps } from "../../app-deps";
import { authPlugin } from "../../http/auth";
import { ELYSIA_CONFIG } from "../../http/kernel";
import { AppError } from "../../shared/errors";
import type { ServiceModule } from "../module";
import { createPortalSession } from "./create-portal";
import { createBillingSession } from "./create-session";
import { handleWebhook } from "./handle-webhook";
import { LapseSweeper } from "./lapse-sweeper";
import {
  cancelLocalSubscription,
  confirmLocalCheckout,
  renderCheckoutPage,
  renderPortalPage,
} from "./local-pages";
import {
  BillingSession,
  PortalRequestBody,
  PortalSession,
  SessionRequest,
  TokenParams,
  WebhookAnswer,
  WebhookEvent,
  WebhookParams,
} from "./schemas";

const tags = ["Billing"];
const html = (text: string) =>
  new Response(text, { headers: { "content-type": "text/html; charset=utf-8" } });
const seeOther = (location: string) => new Response(null, { status: 303, headers: { location } });

/** Provider notifications are small; anything bigger is refused before it is read (anyone may post here). */
export const WEBHOOK_MAX_BYTES = 64 * 1024;
const WEBHOOK_PATH = "/api/v1/billing/webhook/";

const tooLarge = () =>
  new AppError("PAYLOAD_TOO_LARGE", `A webhook body may hold at most ${WEBHOOK_MAX_BYTES / 1024} KB`);

function billingRoutes(deps: AppDeps) {
  return new Elysia({ ...ELYSIA_CONFIG, name: "billing", prefix: "/api/v1/billing" })
    .use(authPlugin(deps))
    .onRequest(({ request }) => {
      // Request hooks run for every route; only the webhook's declared length is checked here.
      const length = request.headers.get("content-length");
      if (length === null || Number(length) <= WEBHOOK_MAX_BYTES) return;
      if (new URL(request.url).pathname.startsWith(WEBHOOK_PATH)) throw tooLarge();
    })
    .post(
      "/create-checkout-session",
      ({ tenant, body }) => createBillingSession({ ctx: tenant, deps, input: body, kind: "checkout" }),
      {
        auth: { mode: "keyAndJwt" },
        body: SessionRequest,
        response: { 200: BillingSession },
        detail: {
          tags,
          summary: "Open a checkout session (subscribe or change plan)",
          description:
            "Needs both an API key and the dashboard user's JWT. Answers the provider's checkout URL; the plan " +
            "changes when the provider reports the payer's authorisation through the webhook. 409 when the " +
            "account already has an active subscription to that plan; 422 for FREE or an unknown plan, or a " +
            "`successUrl`/`cancelUrl` that is not an absolute https URL (http only for localhost). 503 " +
            "BILLING_NOT_CONFIGURED without PAYMENT_PROVIDER; with `local` (test mode) nothing is charged.",
        },
      },
    )
    .post(
      "/create-subscription-session",
      ({ tenant, body }) => createBillingSession({ ctx: tenant, deps, input: body, kind: "subscription" }),
      {
        auth: { mode: "keyAndJwt" },
        body: SessionRequest,
        response: { 200: BillingSession },
        detail: {
          tags,
          summary: "Open a recurring monthly subscription session",
          description:
            "Needs both an API key and the dashboard user's JWT. Creates a monthly subscription with the payment " +
            "provider (MercadoPago preapproval, or the built-in local provider) and answers its checkout URL. " +
            "The event subscription_preapproval with status authorized activates the plan. Same URL rules and " +
            "503 BILLING_NOT_CONFIGURED as the checkout session.",
        },
      },
    )
    .post(
      "/create-portal-session",
      ({ tenant, body }) => createPortalSession({ ctx: tenant, deps, input: body ?? undefined }),
      {
        auth: { mode: "keyAndJwt" },
        body: t.Optional(PortalRequestBody),
        response: { 200: PortalSession },
        detail: {
          tags,
          summary: "Open a portal session for managing the subscription",
          description:
            "Needs both an API key and the dashboard user's JWT. Every account gets a portal: with a " +
            "subscription, the provider's page to manage or cancel it; without one, a page listing the plans. " +
            "Cancelling moves the account to FREE with FREE's limits. `returnUrl` must be an absolute https URL " +
            "(http only for localhost), else 422. 503 BILLING_NOT_CONFIGURED without PAYMENT_PROVIDER.",
        },
      },
    )
    .post(
      "/webhook/:provider",
      ({ params, body, request }) => {
        // A body sent without a declared length (chunked) is measured once parsed.
        if (JSON.stringify(body).length > WEBHOOK_MAX_BYTES) throw tooLarge();
        return handleWebhook({
          deps,
          provider: params.provider,
          signature: request.headers.get("x-signature"),
          requestId: request.headers.get("x-request-id"),
          queryDataId: new URL(request.url).searchParams.get("data.id"),
          event: body,
        });
      },
      {
        params: WebhookParams,
        body: WebhookEvent,
        response: { 200: WebhookAnswer },
        detail: {
          tags,
          summary: "Payment-provider webhook (no authentication; signed)",
          description:
            "Header X-Signature: `ts=<unix seconds>,v1=<hex HMAC-SHA256>` over `id:{data.id};ts:{ts};` with " +
            "PAYMENT_WEBHOOK_SECRET (for `mercadopago`, MercadoPago's own manifest " +
            "`id:{data.id};request-id:{x-request-id};ts:{ts};`). Bodies over 64 KB answer 413 " +
            "PAYLOAD_TOO_LARGE. Bad signatures and signatures older than 5 minutes answer 401 " +
            "INVALID_SIGNATURE; an event id already processed is acknowledged and ignored. The subscription's " +
            "state is read back from the provider: authorized activates the plan; cancelled or paused moves the " +
            "account to FREE.",
        },
      },
    )
    .get(
      "/local/checkout/:token",
      async ({ params }) => html(await renderCheckoutPage({ deps, token: params.token })),
      {
        params: TokenParams,
        response: { 200: t.String({ description: "HTML page" }) },
        detail: {
          tags,
          summary: "Checkout page of the built-in local provider",
          description: "Opened by the payer from checkoutUrl; 404 unless PAYMENT_PROVIDER is local.",
        },
      },
    )
    .post(
      "/local/checkout/:token/confirm",
      async ({ params }) => seeOther(await confirmLocalCheckout({ deps, token: params.token })),
      {
        params: TokenParams,
        response: { 303: t.Null({ description: "Redirect to the session's successUrl" }) },
        detail: {
          tags,
          summary: "Confirm a local checkout",
          description: "Authorises the subscription and sends the signed webhook, as a real provider would.",
        },
      },
    )
    .get(
      "/local/portal/:token",
      async ({ params }) => html(await renderPortalPage({ deps, token: params.token })),
      {
        params: TokenParams,
        response: { 200: t.String({ description: "HTML page" }) },
        detail: {
          tags,
          summary: "Portal page of the built-in local provider",
          description: "Valid for one hour.",
        },
      },
    )
    .post(
      "/local/portal/:token/cancel",
      async ({ params }) => seeOther(await cancelLocalSubscription({ deps, token: params.token })),
      {
        params: TokenParams,
        response: { 303: t.Null({ description: "Redirect to the portal's returnUrl" }) },
        detail: {
          tags,
          summary: "Cancel the subscription from the local portal",
          description: "Cancels the current subscription and sends the signed webhook; the paid plan lapses.",
        },
      },
    );
}

export const billingModule: ServiceModule = {
  name: "billing",
  routes: billingRoutes,
  start: async (deps) => {
    const sweeper = new LapseSweeper(deps);
    sweeper.start();
    return () => sweeper.stop();
  },
};
