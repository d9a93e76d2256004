import { t } from "elysia";
import { UNKNOWN_QUERY_IGNORED } from "../../http/schema-types";

const Email = t.String({
  format: "email",
  maxLength: 254,
  description: "Compared case-insensitively; stored lower-cased",
});
const Password = t.String({ minLength: 8, maxLength: 256, description: "At least 8 characters" });

export const RegisterBody = t.Object(
  {
    accountName: t.String({ minLength: 1, maxLength: 200, description: "Name of the new account (tenant)" }),
    email: Email,
    password: Password,
  },
  { additionalProperties: false },
);

export const RegisterResponse = t.Object({
  accessToken: t.String({ description: "JWT for the dashboard routes (Authorization: Bearer)" }),
  tokenType: t.Literal("bearer"),
  accountId: t.Integer(),
  userId: t.Integer(),
  isAdmin: t.Boolean({ description: "Platform administrator (the e-mail is listed in ADMIN_EMAILS)" }),
  apiKey: t.String({
    description: "The account's first secret key (sk_live_…); shown only in this response",
  }),
  message: t.String(),
  emailVerificationRequired: t.Boolean({
    description:
      "True until the e-mail is verified; FREE accounts have a 7-day grace period for API-key calls",
  }),
});

export const LoginBody = t.Object(
  { email: Email, password: t.String({ minLength: 1, maxLength: 256 }) },
  { additionalProperties: false },
);

export const LoginResponse = t.Object({
  accessToken: t.String(),
  tokenType: t.Literal("bearer"),
  expiresIn: t.Integer({ description: "Seconds until the token expires" }),
  userId: t.Integer(),
  accountId: t.Integer(),
  isAdmin: t.Boolean(),
});

export const MessageResponse = t.Object({ message: t.String() });

export const VerifyEmailQuery = t.Object(
  {
    token: t.String({ minLength: 1, maxLength: 200, description: "The token from the verification link" }),
  },
  UNKNOWN_QUERY_IGNORED,
);

export const VerifyEmailResponse = t.Object({ message: t.String(), emailVerified: t.Literal(true) });

export type RegisterInput = typeof RegisterBody.static;
export type LoginInput = typeof LoginBody.static;
