import { Elysia, t } from "elysia";
import type { AppDeps } from "../../app-deps";
import { authPlugin } from "../../http/auth";
import { ELYSIA_CONFIG } from "../../http/kernel";
import { clientIp } from "../auth/client-ip";
import type { ServiceModule } from "../module";
import { deleteCurrentUser } from "./delete";
import { getCurrentUser } from "./get";
import { UserResponse, UserUpdate } from "./schemas";
import { updateCurrentUser } from "./update";

const tags = ["Users"];

function systemUsersRoutes(deps: AppDeps) {
  return new Elysia({ ...ELYSIA_CONFIG, name: "system-users", prefix: "/api/v1/system-users" })
    .use(authPlugin(deps))
    .get("/me", ({ tenant }) => getCurrentUser({ ctx: tenant, deps }), {
      auth: { mode: "jwt" },
      response: { 200: UserResponse },
      detail: {
        tags,
        summary: "The current dashboard user, with e-mail grace-period information",
        description:
          "Needs the user's JWT. FREE-plan users with an unverified e-mail see `gracePeriodEndsAt` and " +
          "`gracePeriodDaysLeft` (7 days from sign-up); after it, the account's API keys answer 403 EMAIL_NOT_VERIFIED.",
      },
    })
    .put(
      "/me",
      ({ tenant, body, request, server }) =>
        updateCurrentUser({
          ctx: tenant,
          deps,
          input: body,
          client: clientIp(request, server, deps.config.trustProxy),
        }),
      {
        auth: { mode: "jwt" },
        body: UserUpdate,
        response: { 200: UserResponse },
        detail: {
          tags,
          summary: "Update the current user",
          description:
            "Fields not sent are unchanged. Changing `email` or `password` needs `currentPassword` (wrong: 401 " +
            "INVALID_CREDENTIALS; missing: 422); its checks count with login attempts in the login throttle " +
            "(past it, 429 RATE_LIMITED with Retry-After). A new e-mail must be verified again; a new password revokes " +
            "every existing access token, this one included, so log in again. A new e-mail is mailed a verification " +
            "link. E-mail in use: 409 CONFLICT.",
        },
      },
    )
    .delete(
      "/me",
      async ({ tenant, set }) => {
        await deleteCurrentUser({ ctx: tenant, deps });
        set.status = 204;
      },
      {
        auth: { mode: "jwt" },
        response: { 204: t.Void() },
        detail: {
          tags,
          summary: "Delete the current user",
          description:
            "Every access token of the user stops working at once. When it was the account's last user, the " +
            "account is deactivated and its API keys revoked; its data is kept.",
        },
      },
    );
}

export const systemUsersModule: ServiceModule = {
  name: "system-users",
  routes: systemUsersRoutes,
};
