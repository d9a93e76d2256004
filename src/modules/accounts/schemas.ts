import { t } from "elysia";

export const AccountResponse = t.Object({
  accountId: t.Integer(),
  name: t.String(),
  isActive: t.Boolean(),
  plan: t.String(),
  subscriptionStatus: t.String({ description: "none | pending | active | lapsed" }),
  onboardingChecklistStatus: t.Record(t.String(), t.Unknown()),
  paymentCustomerId: t.Union([t.String(), t.Null()]),
  createdAt: t.String({ format: "date-time" }),
  updatedAt: t.String({ format: "date-time" }),
});

const Name = t.String({ minLength: 1, maxLength: 200 });
const Checklist = t.Record(t.String({ maxLength: 100 }), t.Unknown(), {
  description: 'Free-form onboarding progress, e.g. {"catalogueUploaded": true}',
});
const CustomerId = t.Union([t.String({ minLength: 1, maxLength: 200 }), t.Null()]);

/**
 * Update bodies accept the spec's snake_case names and the camelCase names of the response; sending both
 * spellings of one field with different values is a 422.
 */
export const AccountUpdate = t.Object(
  {
    name: t.Optional(Name),
    is_active: t.Optional(t.Boolean()),
    isActive: t.Optional(t.Boolean()),
    onboarding_checklist_status: t.Optional(Checklist),
    onboardingChecklistStatus: t.Optional(Checklist),
    payment_customer_id: t.Optional(CustomerId),
    paymentCustomerId: t.Optional(CustomerId),
  },
  { additionalProperties: false },
);

export type AccountUpdateInput = typeof AccountUpdate.static;
export type AccountOutput = typeof AccountResponse.static;
