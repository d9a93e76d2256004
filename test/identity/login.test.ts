import { describe, expect, test } from "bun:test";
import { createTestContext, sharedTestContext } from "../helpers/context";
import { registerTenant, uniqueEmail } from "../helpers/tenant";

describe("POST /api/v1/auth/token", () => {
  test("returns a bearer JWT for the right e-mail (any letter case) and password", async () => {
    const ctx = await sharedTestContext();
    const tenant = await registerTenant(ctx);
    const res = await ctx.request("POST", "/api/v1/auth/token", {
      body: { email: tenant.email.toUpperCase(), password: tenant.password },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      tokenType: "bearer",
      expiresIn: 3600,
      userId: tenant.userId,
      accountId: tenant.accountId,
      isAdmin: false,
    });
    const me = await ctx.request("GET", "/api/v1/api-keys/", { token: res.body.accessToken });
    expect(me.status).toBe(200);
  });

  test("wrong password and unknown e-mail both answer 401 INVALID_CREDENTIALS", async () => {
    const ctx = await sharedTestContext();
    const tenant = await registerTenant(ctx);
    const wrong = await ctx.request("POST", "/api/v1/auth/token", {
      body: { email: tenant.email, password: "wrong password" },
    });
    const unknown = await ctx.request("POST", "/api/v1/auth/token", {
      body: { email: uniqueEmail(), password: "wrong password" },
    });
    for (const res of [wrong, unknown]) {
      expect(res.status).toBe(401);
      expect(res.body.errorCode).toBe("INVALID_CREDENTIALS");
      expect(res.body.message).toBe(wrong.body.message);
    }
  });

  test("after 5 failures for one e-mail from one client, that client is refused with 429 and Retry-After even with the right password; the owner elsewhere is not", async () => {
    const ctx = await sharedTestContext();
    const tenant = await registerTenant(ctx);
    const ip = {
      "x-forwarded-for": `10.1.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}`,
    };
    for (let i = 0; i < 5; i++) {
      const res = await ctx.request("POST", "/api/v1/auth/token", {
        body: { email: tenant.email, password: `wrong-${i}-password` },
        headers: ip,
      });
      expect(res.status).toBe(401);
    }
    const blocked = await ctx.request("POST", "/api/v1/auth/token", {
      body: { email: tenant.email, password: tenant.password },
      headers: ip,
    });
    expect(blocked.status).toBe(429);
    expect(blocked.body.errorCode).toBe("RATE_LIMITED");
    expect(Number(blocked.headers.get("retry-after"))).toBeGreaterThan(0);
    // The window that refused it: five attempts per e-mail and client.
    expect(blocked.headers.get("x-ratelimit-limit")).toBe("5");
    expect(blocked.headers.get("x-ratelimit-remaining")).toBe("0");
    expect(blocked.headers.get("x-ratelimit-reset")).toBe(blocked.headers.get("retry-after"));
    const owner = await ctx.request("POST", "/api/v1/auth/token", {
      body: { email: tenant.email, password: tenant.password },
      headers: { "x-forwarded-for": "10.200.0.1" },
    });
    expect(owner.status).toBe(200);
  });

  test("one IP failing on 20 different e-mails is limited for every e-mail", async () => {
    const ctx = await createTestContext();
    try {
      const tenant = await registerTenant(ctx);
      const headers = { "x-forwarded-for": "192.0.2.77" };
      for (let i = 0; i < 20; i++) {
        await ctx.request("POST", "/api/v1/auth/token", {
          body: { email: uniqueEmail(), password: "guessing-password" },
          headers,
        });
      }
      const blocked = await ctx.request("POST", "/api/v1/auth/token", {
        body: { email: tenant.email, password: tenant.password },
        headers,
      });
      expect(blocked.status).toBe(429);
      const otherIp = await ctx.request("POST", "/api/v1/auth/token", {
        body: { email: tenant.email, password: tenant.password },
        headers: { "x-forwarded-for": "192.0.2.78" },
      });
      expect(otherIp.status).toBe(200);
    } finally {
      await ctx.close();
    }
  });

  test("a body with unknown fields answers 422", async () => {
    const ctx = await sharedTestContext();
    const res = await ctx.request("POST", "/api/v1/auth/token", {
      body: { email: uniqueEmail(), password: "whatever1", grant_type: "password" },
    });
    expect(res.status).toBe(422);
  });
});
