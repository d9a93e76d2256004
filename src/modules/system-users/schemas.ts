import { t } from "elysia";

export const UserResponse = t.Object({
  userId: t.Integer(),
  accountId: t.Integer(),
  email: t.String(),
  fullName: t.Union([t.String(), t.Null()]),
  isOwner: t.Boolean(),
  isAdmin: t.Boolean({ description: "Platform administrator (e-mail listed in ADMIN_EMAILS)" }),
  plan: t.String(),
  emailVerified: t.Boolean(),
  gracePeriodEndsAt: t.Union([t.String({ format: "date-time" }), t.Null()], {
    description:
      "FREE plan with an unverified e-mail: end of the 7-day grace period for API-key calls; else null",
  }),
  gracePeriodDaysLeft: t.Union([t.Integer({ minimum: 0 }), t.Null()], {
    description: "Whole days left in the grace period (0 when over); null when no grace period applies",
  }),
  createdAt: t.String({ format: "date-time" }),
  updatedAt: t.String({ format: "date-time" }),
});

export const UserUpdate = t.Object(
  {
    fullName: t.Optional(t.Union([t.String({ maxLength: 200 }), t.Null()])),
    email: t.Optional(
      t.String({
        format: "email",
        maxLength: 254,
        description: "Needs currentPassword; must be verified again",
      }),
    ),
    password: t.Optional(
      t.String({
        minLength: 8,
        maxLength: 256,
        description: "Needs currentPassword; revokes every access token of the user, this one included",
      }),
    ),
    currentPassword: t.Optional(t.String({ minLength: 1, maxLength: 256 })),
  },
  { additionalProperties: false },
);

export type UserUpdateInput = typeof UserUpdate.static;
export type UserOutput = typeof UserResponse.static;
