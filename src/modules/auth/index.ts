import { Elysia } from "elysia";
import type { AppDeps } from "../../app-deps";
import { authPlugin } from "../../http/auth";
import { ELYSIA_CONFIG } from "../../http/kernel";
import { AppError } from "../../shared/errors";
import type { ServiceModule } from "../module";
import { clientIp } from "./client-ip";
import { emailGraceGuard } from "./email-grace-guard";
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

const wantsHtml = (request: Request): boolean => (request.headers.get("accept") ?? "").includes("text/html");

/** The link is opened in a browser: answer a page a person can read, not JSON. */
async function verificationPage(deps: AppDeps, query: { token: string }): Promise<Response> {
  try {
    const result = await verifyEmail({ deps, input: query });
    return page(200, "E-mail address verified", `${result.message}. You can close this page.`);
  } catch (error) {
    if (!(error instanceof AppError) || error.code !== "NOT_FOUND") throw error;
    return page(404, "This link is not valid", `${error.message}. Ask for a new verification e-mail.`);
  }
}

function page(status: number, title: string, text: string): Response {
  const html =
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title>` +
    '<meta name="viewport" content="width=device-width, initial-scale=1"></head>' +
    '<body style="font-family: system-ui, sans-serif; max-width: 32rem; margin: 4rem auto">' +
    `<h1>${title}</h1><p>${text}</p></body></html>`;
  return new Response(html, { status, headers: { "content-type": "text/html; charset=utf-8" } });
}

function authRoutes(deps: AppDeps) {
  return new Elysia({ ...ELYSIA_CONFIG, name: "auth-routes", prefix: "/api/v1/auth" })
    .use(authPlugin(deps))
    .post(
      "/register",
      ({ body, request, server, set }) =>
        registerAccount({
          deps,
          input: body,
          client: clientIp(request, server, deps.config.trustProxy),
          limitHeaders: (headers) => Object.assign(set.headers, headers),
        }),
      {
        body: RegisterBody,
        response: { 200: RegisterResponse },
        detail: {
          tags,
          summary: "Sign up: create an account, its owner user and first secret API key",
          description:
            "Creates the account, the owner user, a secret API key (`sk_live_…`, returned only here) and an access " +
            "token in one transaction, then sends a verification e-mail. A second sign-up with the same e-mail " +
            "(case-insensitive) answers 409 CONFLICT. Passwords need at least 8 characters. Sign-ups are " +
            "limited per client address (SIGNUP_LIMIT_PER_HOUR, default 20): past it, 429 RATE_LIMITED with " +
            "Retry-After. `isAdmin` is false until the e-mail is verified.",
        },
      },
    )
    .post(
      "/token",
      ({ body, request, server }) =>
        loginUser({ deps, input: body, client: clientIp(request, server, deps.config.trustProxy) }),
      {
        body: LoginBody,
        response: { 200: LoginResponse },
        detail: {
          tags,
          summary: "Log in with e-mail and password; returns a JWT",
          description:
            "Wrong e-mail or password: 401 INVALID_CREDENTIALS. Attempts are counted before the password is " +
            "checked; within 15 minutes, after 5 for one e-mail from one client address, 20 from one client " +
            "address, or 50 for one e-mail from all addresses, answers 429 RATE_LIMITED with Retry-After. A " +
            "successful login does not count. The client address is the connection's, or taken from " +
            "X-Forwarded-For only as far as TRUST_PROXY allows.",
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
            "Needs the user's JWT. Always answers 202: within a minute of the last message, or when the " +
            "address is already verified, nothing new is sent (the message says so). Without SMTP_URL the " +
            "message is written to DATA_DIR/outbox.",
        },
      },
    )
    .get(
      "/verify-email",
      ({ query, request }) =>
        wantsHtml(request) ? verificationPage(deps, query) : verifyEmail({ deps, input: query }),
      {
        query: VerifyEmailQuery,
        response: { 200: VerifyEmailResponse },
        detail: {
          tags,
          summary: "Verify an e-mail address with the token from the verification link",
          description:
            "Tokens are single-use, valid 24 hours and bound to the address they were sent to (an e-mail " +
            "change voids them). An unknown, expired or already used token answers 404 NOT_FOUND. A client " +
            "that accepts text/html (a browser opening the link) gets a small HTML page instead of JSON.",
        },
      },
    );
}

export const authModule: ServiceModule = {
  name: "auth",
  routes: authRoutes,
  guards: () => [emailGraceGuard()],
};
