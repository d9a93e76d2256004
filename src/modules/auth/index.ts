import { Elysia } from "elysia";
import type { AppDeps } from "../../deps";
import { authPlugin } from "../../http/auth";
import { ELYSIA_CONFIG } from "../../http/kernel";
import { clientIp } from "./client-ip";
import { loginUser } from "./login";
import { logoutUser } from "./logout";
import { registerAccount } from "./register";
import {
  LoginBody,
  LoginResponse,
  MessageResponse,
  RegisterBody,
  RegisterResponse,
  VerifyEmailQuery,
  VerifyEmailResponse,
} from "./schemas";
import { sendVerificationEmail } from "./send-verification";
import { verifyEmail } from "./verify-email";

const tags = ["Authentication"];

export function authModule(deps: AppDeps) {
  return new Elysia({ ...ELYSIA_CONFIG, name: "auth-routes", prefix: "/api/v1/auth" })
    .use(authPlugin(deps))
    .post("/register", ({ body }) => registerAccount({ deps, input: body }), {
      body: RegisterBody,
      response: { 200: RegisterResponse },
      detail: {
        tags,
        summary: "Sign up: create an account, its owner user and first secret API key",
        description:
          "Creates the account, the owner user, a secret API key (`sk_live_…`, returned only here) and an access " +
          "token in one transaction, then sends a verification e-mail. A second sign-up with the same e-mail " +
          "(case-insensitive) answers 409 CONFLICT. Passwords need at least 8 characters.",
      },
    })
    .post(
      "/token",
      ({ body, request, server }) => loginUser({ deps, input: body, ip: clientIp(request, server) }),
      {
        body: LoginBody,
        response: { 200: LoginResponse },
        detail: {
          tags,
          summary: "Log in with e-mail and password; returns a JWT",
          description:
            "Wrong e-mail or password: 401 INVALID_CREDENTIALS. After 5 failed attempts for one e-mail, or 20 " +
            "from one client IP, within 15 minutes, answers 429 RATE_LIMITED with Retry-After.",
        },
      },
    )
    .post("/logout", ({ tenant }) => logoutUser({ ctx: tenant, deps }), {
      auth: { mode: "jwt" },
      response: { 200: MessageResponse },
      detail: {
        tags,
        summary: "Log out: revoke the presented access token",
        description: "The token answers 401 TOKEN_REVOKED from the next request on, in every process.",
      },
    })
    .post(
      "/send-verification-email",
      async ({ tenant, set }) => {
        set.status = 202;
        return sendVerificationEmail({ ctx: tenant, deps });
      },
      {
        auth: { mode: "jwt" },
        response: { 202: MessageResponse },
        detail: {
          tags,
          summary: "Send a new verification e-mail to the current user",
          description:
            "Needs the user's JWT. Already verified: 409 CONFLICT. At most one message per minute (429 " +
            "RATE_LIMITED otherwise). Without SMTP_URL the message is written to DATA_DIR/outbox.",
        },
      },
    )
    .get("/verify-email", ({ query }) => verifyEmail({ deps, input: query }), {
      query: VerifyEmailQuery,
      response: { 200: VerifyEmailResponse },
      detail: {
        tags,
        summary: "Verify an e-mail address with the token from the verification link",
        description:
          "Tokens are single-use and valid 24 hours. An unknown, expired or already used token answers " +
          "404 NOT_FOUND.",
      },
    });
}
