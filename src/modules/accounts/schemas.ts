import { t } from "elysia";

/** The specification's field names, spelling included (`is_active` next to `accountId`). */
export const AccountResponse = t.Object({
  accountId: t.Integer(),
  name: t.String(),
  is_active: t.Boolean(),
  onboarding_checklist_status: t.Record(t.String(), t.Unknown()),
  payment_customer_id: t.Union([t.String(), t.Null()], {
    description: "The payment provider's customer id, once the account has paid",
  }),
  plan: t.String(),
  subscriptionStatus: t.String({ description: "none | pending | active | lapsed" }),
  subscriptionRenewsAt: t.Union([t.String({ format: "date-time" }), t.Null()], {
    description: "When the current subscription renews (or ends); null without one",
  }),
  createdAt: t.String({ format: "date-time" }),
  updatedAt: t.String({ format: "date-time" }),
});

const Name = t.String({ minLength: 1, maxLength: 200 });
const Checklist = t.Record(t.String({ maxLength: 100 }), t.Unknown(), {
  description:
    'Free-form onboarding progress, e.g. {"catalogueUploaded": true}; PATCH merges these keys into the stored object',
});
const CustomerId = t.Union([t.String({ minLength: 1, maxLength: 200 }), t.Null()]);

/** Update bodies use the record's own names. */
export const AccountUpdate = t.Object(
  {
    name: t.Optional(Name),
    is_active: t.Optional(t.Boolean()),
    onboarding_checklist_status: t.Optional(Checklist),
    payment_customer_id: t.Optional(CustomerId),
  },
  { additionalProperties: false },
);

export type AccountUpdateInput = typeof AccountUpdate.static;
export type AccountOutput = typeof AccountResponse.static;
