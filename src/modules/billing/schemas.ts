import { t } from "elysia";

export const SessionRequest = t.Object({
  plan: t.String({ minLength: 1, maxLength: 50, description: "A paid plan from GET /api/v1/plans/" }),
  successUrl: t.Optional(
    t.String({ format: "uri", maxLength: 2000, description: "Where the payer returns after authorising" }),
  ),
  cancelUrl: t.Optional(
    t.String({ format: "uri", maxLength: 2000, description: "Where the payer returns after giving up" }),
  ),
});

export const BillingSession = t.Object(
  {
    sessionId: t.Integer(),
    provider: t.String({ description: "local | mercadopago" }),
    kind: t.String({ description: "subscription | checkout" }),
    plan: t.String(),
    status: t.String({ description: "pending until the provider reports the payer's authorisation" }),
    checkoutUrl: t.String({ description: "Send the payer here to authorise the monthly subscription" }),
    createdAt: t.String({ format: "date-time" }),
  },
  { description: "A checkout or subscription session opened with the payment provider" },
);

export const PortalRequestBody = t.Object({
  returnUrl: t.Optional(t.String({ format: "uri", maxLength: 2000 })),
});

export const PortalSession = t.Object(
  {
    provider: t.String(),
    url: t.String({ description: "The page where the subscriber manages or cancels the subscription" }),
  },
  { description: "A portal session for managing the subscription" },
);

export const WebhookParams = t.Object({ provider: t.String({ maxLength: 50 }) });

const Id = t.Union([t.String({ minLength: 1, maxLength: 200 }), t.Integer()]);

export const WebhookEvent = t.Object(
  {
    id: Id,
    type: t.String({ maxLength: 100, description: "e.g. subscription_preapproval" }),
    action: t.Optional(t.String({ maxLength: 100 })),
    data: t.Object({ id: Id }, { additionalProperties: true }),
  },
  { additionalProperties: true, description: "A payment-provider notification (MercadoPago format)" },
);

export const WebhookAnswer = t.Object({
  received: t.Boolean(),
  duplicate: t.Boolean({ description: "True when this event id was already processed and was ignored" }),
});

export const TokenParams = t.Object({ token: t.String({ minLength: 1, maxLength: 200 }) });

export type SessionRequestType = typeof SessionRequest.static;
export type BillingSessionType = typeof BillingSession.static;
export type WebhookEventType = typeof WebhookEvent.static;
export type WebhookAnswerType = typeof WebhookAnswer.static;
